// A rank that skips a synchronised BatchNorm forward is named by the others within the stall timeout, as a
// missing gradient all-reduce is (its own ctest case, mpi_sync_batchnorm_stall, np 3: the stalled backend
// would be left unusable for the cases after it).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "comm/backend.h"
#include "comm/stall_inspector.h"
#include "models/sync_batch_norm.h"
#include "runtime/collective_watch.h"
#include "train/batch_norm_sync.h"
#include "test_world.h"

namespace ft::test {
namespace {

constexpr double kTimeout = 3.0;
constexpr double kSlack = 2.0;  // as the backends' own stall cases (tests/mpi/stall_test.cpp)

TEST(SyncBatchNormStall, RankSkippingAForwardIsNamedWithinTheTimeout) {
  if (!std::getenv("FUSETRAIN_TEST_NORM_STALL")) GTEST_SKIP() << "its own ctest case: mpi_sync_batchnorm_stall";
  const World& world = ft::test::world();
  ASSERT_GE(world.size(), 2);
  BackendOptions options;
  options.stall_timeout_s = kTimeout;
  options.mpi_algorithm = MpiAlgorithm::native;
  auto backend = make_backend(world, options);
  SyncBatchNorm2d layer(3);
  layer->synchronize_with(std::make_shared<BackendNormSync>(*backend));
  // collectives #1 (forward) and #2 (backward: the input needs its gradient, as every layer after the first)
  layer->forward(at::randn({2, 3, 4, 4}).requires_grad_()).sum().backward();
  if (world.rank() != 1) {
    const auto start = std::chrono::steady_clock::now();
    try {
      layer->forward(at::randn({2, 3, 4, 4}));
      ADD_FAILURE() << "the forward completed without rank 1";
    } catch (const StallError& e) {
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("stall reported after %.2f s (synchronised BatchNorm, timeout %.1f s)\n", waited, kTimeout);
      const std::string message = e.what();
      EXPECT_GE(waited, kTimeout - 0.1) << message;
      EXPECT_LE(waited, kTimeout + kSlack) << message;
      EXPECT_NE(message.find("all-reduce #3 (synchronised BatchNorm forward"), std::string::npos) << message;
      EXPECT_NE(message.find("rank 1 ("), std::string::npos) << message;
      EXPECT_EQ(e.ranks(), std::vector<int>{1}) << message;
    }
  }
  world.barrier();
  // Rank 1 joins late, so the all-reduce the others abandoned completes and nothing is pending at the end.
  if (world.rank() == 1) {
    at::Tensor late = at::zeros({7});
    backend->allreduce(late.data_ptr(), 7, DType::kFloat32);
  }
  world.barrier();
}

}  // namespace
}  // namespace ft::test
