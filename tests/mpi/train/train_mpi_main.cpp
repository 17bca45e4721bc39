// Entry point of mpi_train_tests: one MPI world for all cases; every rank exits non-zero if any rank
// saw a failure, so ctest's verdict does not depend on which rank's output it reads.
#include <gtest/gtest.h>

#include "test_world.h"

int main(int argc, char** argv) {
  const ft::World& world = ft::test::world();
  ::testing::InitGoogleTest(&argc, argv);
  if (world.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  const double any = world.allreduce_max(static_cast<double>(failed));
  return any > 0 ? 1 : 0;
}
