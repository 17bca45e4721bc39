// Tests of the GPU utilisation sampler's inactive cases (src/monitor/gpu_sampler.h): a rank without a GPU, or a
// build without CUDA, starts no thread, takes no sample and says why.
#include <gtest/gtest.h>

#include "kernels/device_query.h"
#include "monitor/gpu_sampler.h"

namespace ft {
namespace {

TEST(GpuSampler, WithoutAGpuItStaysInactiveAndSaysWhy) {
  for (const int device : {-1, -2}) {
    GpuSampler sampler(device, 0);
    EXPECT_FALSE(sampler.active()) << device;
    EXPECT_EQ(sampler.status(), cuda_kernels_built() ? "no GPU" : "built without CUDA") << device;
    EXPECT_TRUE(sampler.stop().empty()) << device;
  }
}

}  // namespace
}  // namespace ft
