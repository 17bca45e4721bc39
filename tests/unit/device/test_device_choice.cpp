// Tests of the CUDA decision in train/device_setup: it follows this build (CUDA compiled in) and the
// devices the ranks see, not LibTorch's own CUDA support; CUDA asked of a build without it is refused. And
// a rank placed on the CPU: its threads, and one inter-op thread.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include "runtime/error.h"
#include "device/device_setup.h"
#include "device/visible_devices.h"
#include "test_world.h"

namespace ft {
namespace {

TEST(DeviceChoice, AutoFollowsTheBuildAndTheDevicesSeen) {
  EXPECT_FALSE(cuda_wanted(DeviceChoice::automatic, false, true)) << "a build without CUDA on a GPU host";
  EXPECT_FALSE(cuda_wanted(DeviceChoice::automatic, true, false));
  EXPECT_TRUE(cuda_wanted(DeviceChoice::automatic, true, true));
  EXPECT_FALSE(cuda_wanted(DeviceChoice::cpu, true, true));
}

TEST(DeviceChoice, CudaOfABuildWithoutCudaIsRefusedByName) {
  try {
    cuda_wanted(DeviceChoice::cuda, false, true);
    FAIL() << "train.device cuda was accepted by a build without CUDA";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.device is 'cuda' but this fusetrain was built without CUDA"),
              std::string::npos)
        << e.what();
  }
  // With CUDA built, a rank that sees no device is named by the placement, not here.
  EXPECT_TRUE(cuda_wanted(DeviceChoice::cuda, true, false));
}

TEST(DeviceChoice, AvailabilityIsTheBuildsAnswer) {
  EXPECT_EQ(cuda_available(), cuda_kernels_built() && visible_devices().count() > 0);
  EXPECT_EQ(cuda_available(), cuda_unavailable_reason().empty()) << cuda_unavailable_reason();
  if (!cuda_kernels_built()) EXPECT_NE(cuda_unavailable_reason().find("this build has no CUDA"), std::string::npos);
}

// The only test of its process (ctest runs each suite alone) to place a rank, before any parallel work:
// inter-op threads can be set once, then.
TEST(CpuPlacement, TheRankTakesTrainThreadsAndOneInterOpThread) {
  Config config;
  config.train.device = DeviceChoice::cpu;
  config.train.threads = 1;
  EXPECT_EQ(place_rank(config, test::world()), at::Device(at::kCPU));
  EXPECT_EQ(at::get_num_threads(), 1);
  EXPECT_EQ(at::get_num_interop_threads(), 1);
  config.train.threads = 3;
  place_rank(config, test::world());
  EXPECT_EQ(at::get_num_threads(), 3);
}

}  // namespace
}  // namespace ft
