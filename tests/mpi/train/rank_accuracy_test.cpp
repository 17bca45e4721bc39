// Each rank's own figures on its slice of the test split (before the all-reduce) add up to the global ones,
// are kept per evaluated epoch for every rank, reach the results file and are printed as one line per rank.
#include <gtest/gtest.h>

#include <cmath>

#include "comm/backend.h"
#include "io/paths.h"
#include "results/rank_gather.h"
#include "results/results_file.h"
#include "train/trainer.h"
#include "train_fixture.h"
#include "test_paths.h"

namespace ft::test {
namespace {

constexpr double kTestImages = 64;  // the fixture's test split

class RankAccuracy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const World& w = world();
    Config c = small_config(synthetic_shards("rank_accuracy", 96, 2), "mpi");
    c.optimizer.lr = 0.0005;  // still learning after two epochs: the slices' losses and accuracies differ
    auto backend = make_backend(w, BackendOptions{});
    Trainer trainer(c, w, *backend, at::Device(at::kCPU));
    if (w.rank() == 0) ::testing::internal::CaptureStdout();
    outcome_ = new TrainOutcome(trainer.run());
    if (w.rank() == 0) printed_ = new std::string(::testing::internal::GetCapturedStdout());
    ranks_ = new std::vector<RankRecord>(gather_rank_records(w, outcome_->rank));
  }
  static void TearDownTestSuite() {
    delete outcome_;
    delete ranks_;
    delete printed_;
    outcome_ = nullptr, ranks_ = nullptr, printed_ = nullptr;
  }
  static TrainOutcome* outcome_;
  static std::vector<RankRecord>* ranks_;
  static std::string* printed_;  // rank 0's standard output during the run
};

TrainOutcome* RankAccuracy::outcome_ = nullptr;
std::vector<RankRecord>* RankAccuracy::ranks_ = nullptr;
std::string* RankAccuracy::printed_ = nullptr;

TEST_F(RankAccuracy, OwnTestCountsSumToTheGlobal) {
  const auto& s = outcome_->summary;
  double images = 0, correct = 0, loss = 0;
  bool loss_differs = false, acc_differs = false;
  for (const auto& r : *ranks_) {
    images += static_cast<double>(r.test_images);
    correct += r.test_acc * static_cast<double>(r.test_images);
    loss += r.test_loss * static_cast<double>(r.test_images);
    loss_differs = loss_differs || std::abs(r.test_loss - s.final_test_loss) > 1e-9;
    acc_differs = acc_differs || r.test_acc != s.final_test_acc;
  }
  EXPECT_EQ(images, kTestImages);
  EXPECT_NEAR(correct, s.final_test_acc * kTestImages, 1e-9);
  EXPECT_NEAR(loss, s.final_test_loss * kTestImages, 1e-9);
  if (world().size() == 1) return;
  EXPECT_TRUE(loss_differs) << "every rank reports the global test loss, not its own";
  EXPECT_TRUE(acc_differs) << "every rank reports the global test accuracy, not its own";
}

TEST_F(RankAccuracy, EveryRankHasARowPerEvaluatedEpoch) {
  const auto& rows = outcome_->rank_epochs;
  const auto& epochs = outcome_->epochs;
  const std::size_t n = static_cast<std::size_t>(world().size());
  ASSERT_EQ(rows.size(), n * epochs.size());
  for (std::size_t e = 0; e < epochs.size(); ++e) {
    double correct = 0, train_loss = 0;
    for (std::size_t r = 0; r < n; ++r) {
      const auto& row = rows[e * n + r];
      EXPECT_EQ(row.rank, static_cast<int>(r));
      EXPECT_EQ(row.epoch, epochs[e].epoch);
      correct += row.test_acc * static_cast<double>((*ranks_)[r].test_images);
      train_loss += row.train_loss;  // every rank trains on as many images per epoch
    }
    EXPECT_NEAR(correct, epochs[e].test_acc * kTestImages, 1e-9) << "epoch " << e + 1;
    EXPECT_NEAR(train_loss / static_cast<double>(n), epochs[e].train_loss, 1e-9) << "epoch " << e + 1;
  }
  const auto& last = rows[rows.size() - n + static_cast<std::size_t>(world().rank())];
  EXPECT_EQ(last.test_acc, outcome_->rank.test_acc);
  EXPECT_EQ(last.train_acc, outcome_->rank.train_acc);
}

TEST_F(RankAccuracy, ResultsFileKeepsTheTable) {
  if (world().rank() != 0) return;
  RunRecord record;
  record.epochs = outcome_->epochs;
  record.ranks = *ranks_;
  record.rank_epochs = outcome_->rank_epochs;
  const std::string path = ft::test::temp_dir() + "/rank_accuracy.h5";
  write_results(path, record);
  const RunRecord back = read_results(path);
  paths::remove(path);
  ASSERT_EQ(back.rank_epochs.size(), static_cast<std::size_t>(world().size()) * outcome_->epochs.size());
  EXPECT_EQ(back.rank_epochs.back().rank, world().size() - 1);
  EXPECT_EQ(back.rank_epochs.back().test_acc, outcome_->rank_epochs.back().test_acc);
  EXPECT_EQ(back.ranks.back().test_loss, ranks_->back().test_loss);
}

TEST_F(RankAccuracy, RankZeroPrintsEveryRanksLineInOrder) {
  if (world().rank() != 0 || world().size() == 1) return;
  const std::string& out = *printed_;
  const auto first = out.find("Rank 0, Epoch [2/2], Train Loss: ");
  const auto last = out.find(cat("Rank ", world().size() - 1, ", Epoch [2/2], Train Loss: "));
  const auto global = out.find("epoch   2/2");
  ASSERT_NE(first, std::string::npos) << out;
  ASSERT_NE(last, std::string::npos) << out;
  EXPECT_LT(first, last) << out;
  EXPECT_LT(last, global) << "the global line follows the ranks' lines: " << out;
  EXPECT_NE(out.find(", Train Acc: "), std::string::npos) << out;
  EXPECT_NE(out.find("%, Test Loss: "), std::string::npos) << out;
}

}  // namespace
}  // namespace ft::test
