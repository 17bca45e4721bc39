// Entry point of mpi_tests: every rank runs the same GoogleTest cases in the same order; rank 0 prints
// the usual report, other ranks print only their failures, and every rank exits non-zero if any failed.
#include <gtest/gtest.h>

#include <cstdio>

#include "mpi_env.h"

namespace {

// Failure lines of a rank other than 0, tagged with the rank so they can be told apart.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}

  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.message());
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (info.result()->Failed())
      std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", rank_, info.test_suite_name(), info.name());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  const ft::World& world = ft::test::world();
  ::testing::InitGoogleTest(&argc, argv);
  if (world.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(world.rank()));
  }
  const bool failed = RUN_ALL_TESTS() != 0;
  ft::test::release_shared_backends();
  const double any_failed = world.allreduce_max(failed ? 1.0 : 0.0);
  if (world.rank() == 0 && any_failed > 0 && !failed)
    std::fprintf(stderr, "mpi_tests: rank 0 passed but another rank failed (see [rank N] lines)\n");
  return any_failed > 0 ? 1 : 0;
}
