// Tests of the CUDA decision in train/device_setup: it follows this build (CUDA compiled in) and the
// devices the ranks see, not LibTorch's own CUDA support; CUDA asked of a build without it is refused.
#include <gtest/gtest.h>

#include "runtime/error.h"
#include "device/device_setup.h"
#include "device/visible_devices.h"

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

}  // namespace
}  // namespace ft
