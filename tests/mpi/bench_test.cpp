// All-reduce time of a 45 MB float32 buffer (about ResNet-18's gradients) for each host backend, against a
// blocking MPI_Allreduce on the world communicator as the in-run peer; prints medians (ctest -L bench).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "mpi_env.h"

namespace ft {
namespace {

constexpr std::size_t kBytes = 45'000'000;
constexpr int kWarmup = 2, kRepeats = 9;

// Median seconds of `op` over the repeats, agreed across ranks (the slowest rank's time per repeat).
double median_seconds(const std::function<void()>& op) {
  const World& world = test::world();
  for (int i = 0; i < kWarmup; ++i) op();
  std::vector<double> times;
  for (int i = 0; i < kRepeats; ++i) {
    world.barrier();
    const auto start = std::chrono::steady_clock::now();
    op();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    times.push_back(world.allreduce_max(seconds));
  }
  std::nth_element(times.begin(), times.begin() + kRepeats / 2, times.end());
  return times[kRepeats / 2];
}

TEST(Bench, AllReduce45MBFloat32) {
  const World& world = test::world();
  std::vector<float> data(kBytes / sizeof(float), 1.0f);
  const double peer = median_seconds([&] {
    FT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()), MPI_FLOAT, MPI_SUM,
                               world.comm()));
  });
  if (world.rank() == 0)
    std::printf("all-reduce %.1f MB float32, %d ranks: MPI_Allreduce (peer) median %.1f ms\n", kBytes / 1e6,
                world.size(), peer * 1e3);
  for (const std::string& name : test::host_backends()) {
    Backend& backend = test::shared_backend(name);
    const double seconds = median_seconds([&] { backend.allreduce(data.data(), data.size(), DType::kFloat32); });
    if (world.rank() == 0)
      std::printf("all-reduce %.1f MB float32, %d ranks: %-4s median %.1f ms (%.2f GB/s bus, %.2fx the peer)\n",
                  kBytes / 1e6, world.size(), name.c_str(), seconds * 1e3,
                  2.0 * (world.size() - 1) / world.size() * kBytes / seconds / 1e9, seconds / peer);
  }
}

}  // namespace
}  // namespace ft
