// Printing and judging an epoch: the figures are global (reduced over ranks), so every rank reaches the same
// verdict and rank 0 alone prints.
#include "train/epoch_report.h"

#include <cmath>
#include <cstdio>

#include "runtime/error.h"
#include "checkpoint/state_digest.h"

namespace ft {
namespace {

void print_rank_lines(const std::vector<RankEpochRecord>& rank_epochs, int epoch, int epochs) {
  for (const auto& r : rank_epochs) {
    if (r.epoch != epoch) continue;
    std::printf("Rank %d, Epoch [%d/%d], Train Loss: %.4f, Train Acc: %.2f%%, Test Loss: %.4f, Test Acc: %.2f%%\n",
                r.rank, r.epoch, epochs, r.train_loss, 100 * r.train_acc, r.test_loss, 100 * r.test_acc);
  }
}

}  // namespace

void print_epoch(const EpochRecord& record, const std::vector<RankEpochRecord>& rank_epochs, int epochs, int ranks) {
  if (record.evaluated && ranks > 1) print_rank_lines(rank_epochs, record.epoch, epochs);
  std::printf("epoch %3d/%d  train loss %.4f acc %6.2f%%", record.epoch, epochs, record.train_loss,
              100 * record.train_acc);
  if (record.evaluated) std::printf("  test loss %.4f acc %6.2f%%", record.test_loss, 100 * record.test_acc);
  std::printf("  lr %.5f  %.2fs  %.0f img/s\n", record.lr, record.epoch_time_s, record.images_per_s);
  std::fflush(stdout);
}

void record_digests(EpochRecord& record, Network& network, torch::optim::Optimizer& optimizer, FusedStep* fused) {
  if (fused) fused->store_step_counts();
  record.weights_digest = weights_digest(network);
  record.optimizer_digest = optimizer_digest(optimizer);
}

void require_finite_loss(double first_bad_step, int epoch, Precision precision) {
  FT_REQUIRE(first_bad_step < 0, "non-finite training loss at optimizer step ",
             static_cast<std::int64_t>(first_bad_step), " (epoch ", epoch, ") with precision ", precision,
             ": lower optimizer.lr or check the data; the last checkpoint (if any) is kept");
}

void require_finite_test_loss(const EpochRecord& record, Precision precision) {
  if (!record.evaluated || std::isfinite(record.test_loss)) return;
  throw SharedError(cat("non-finite test loss after epoch ", record.epoch, " with precision ", precision,
                        ": the epoch's checkpoint is not written and the last good one (if any) is kept; lower "
                        "optimizer.lr or check the data"));
}

}  // namespace ft
