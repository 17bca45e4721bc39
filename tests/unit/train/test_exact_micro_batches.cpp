// The random streams of the reproducible step's micro-batches: each (epoch, step, micro-batch) of a run draws
// its own stream, and micro-batch k of the global order draws the same one whatever the number of ranks.
#include "train/exact_micro_batches.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "tiny_network.h"

namespace ft {
namespace {

// The first draws from the CPU stream that micro-batch `a` of (epoch, step) is seeded with.
std::vector<float> draws(ExactMicroBatches& batches, int epoch, std::int64_t step, int a) {
  batches.begin_micro_batch(epoch, step, a);
  const at::Tensor t = at::rand({4}, at::kFloat).contiguous();
  batches.end_micro_batch(a, at::zeros({1}, at::kDouble));
  return {t.data_ptr<float>(), t.data_ptr<float>() + t.numel()};
}

// Two ranks of two micro-batches each (a global batch of 4), three epochs of four steps: 48 micro-batches, among
// them epoch 1's first and epoch 0's second, whose epoch and position alone differ by one.
TEST(ExactMicroBatches, EachMicroBatchOfARunDrawsItsOwnStream) {
  auto net = test::tiny_network();
  const int ranks = 2, rows = 2;
  std::set<std::vector<float>> seen;
  int micro_batches = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    ExactMicroBatches batches(*net, net->parameters(), rows, rows * ranks, rank, ranks, 5);
    for (int epoch = 0; epoch < 3; ++epoch)
      for (std::int64_t step = 0; step < 4; ++step)
        for (int a = 0; a < rows; ++a, ++micro_batches) seen.insert(draws(batches, epoch, step, a));
  }
  EXPECT_EQ(static_cast<int>(seen.size()), micro_batches);
}

// Micro-batch k = a x ranks + rank of a global batch of 4: k = 3 is (rank 0, a 3) on one rank, (rank 1, a 1) on
// two and (rank 3, a 0) on four; k = 2 is another stream.
TEST(ExactMicroBatches, AMicroBatchDrawsTheSameStreamOnAnyNumberOfRanks) {
  auto net = test::tiny_network();
  auto on = [&](int ranks, int rank, int a, int epoch, std::int64_t step) {
    ExactMicroBatches batches(*net, net->parameters(), 4 / ranks, 4, rank, ranks, 11);
    return draws(batches, epoch, step, a);
  };
  for (const auto& [epoch, step] : std::vector<std::pair<int, std::int64_t>>{{0, 0}, {2, 5}}) {
    const std::vector<float> one = on(1, 0, 3, epoch, step);
    EXPECT_EQ(on(2, 1, 1, epoch, step), one) << "epoch " << epoch << " step " << step;
    EXPECT_EQ(on(4, 3, 0, epoch, step), one) << "epoch " << epoch << " step " << step;
    EXPECT_NE(on(2, 0, 1, epoch, step), one) << "k = 2 drew k = 3's stream";
  }
}

}  // namespace
}  // namespace ft
