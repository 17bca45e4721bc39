// Scoring a split for `fusetrain evaluate`: top-k hits and confusion counts worked by hand, and on a real
// network the sums of score_split against training's own evaluation (same loss and accuracy), with the
// kept logits equal to the plain forward pass of the split's first images.
#include <gtest/gtest.h>

#include "results/class_metrics.h"
#include "test_world.h"
#include "evaluation/split_scoring.h"

namespace ft {
namespace {

TEST(SplitScoring, TopKHitsCountLabelsAmongTheBestLogits) {
  const auto logits = at::tensor({0.1f, 0.9f, 0.5f, 0.2f,    // order 1, 2, 3, 0
                                  0.8f, 0.1f, 0.3f, 0.4f},   // order 0, 3, 2, 1
                                 at::kFloat).view({2, 4});
  const auto labels = at::tensor({2, 1}, at::kLong);
  EXPECT_EQ(top_k_hits(logits, labels, 1).item<std::int64_t>(), 0);
  EXPECT_EQ(top_k_hits(logits, labels, 2).item<std::int64_t>(), 1);
  EXPECT_EQ(top_k_hits(logits, labels, 3).item<std::int64_t>(), 1);
  EXPECT_EQ(top_k_hits(logits, labels, 4).item<std::int64_t>(), 2);
  EXPECT_EQ(top_k_hits(logits, labels, 5).item<std::int64_t>(), 2) << "k is capped at the class count";
}

TEST(SplitScoring, ConfusionCountsRowsTrueColumnsPredicted) {
  const auto predicted = at::tensor({0, 2, 2, 1, 0}, at::kLong);
  const auto labels = at::tensor({0, 2, 1, 1, 2}, at::kLong);
  const auto counts = confusion_counts(predicted, labels, 3);
  const auto expected = at::tensor({1, 0, 0,  //
                                    0, 1, 1,  //
                                    1, 0, 1}, at::kLong).view({3, 3});
  EXPECT_TRUE(at::equal(counts, expected)) << counts;
}

HostSplit pattern_split(int n, int classes) {
  HostSplit s;
  s.meta.dataset = "pattern";
  for (int k = 0; k < classes; ++k) s.meta.class_names.push_back("c" + std::to_string(k));
  s.meta.height = s.meta.width = 12;
  s.meta.channels = 1;
  s.meta.mean = {0.5};
  s.meta.std = {0.25};
  s.meta.count = s.total = n;
  s.images.resize(static_cast<std::size_t>(n) * 12 * 12);
  for (std::size_t i = 0; i < s.images.size(); ++i) s.images[i] = static_cast<std::uint8_t>((i * 37 + i / 144) % 256);
  for (int i = 0; i < n; ++i) s.labels.push_back((i * 7) % classes);
  return s;
}

TEST(SplitScoring, AgreesWithTrainingsEvaluation) {
  const int classes = 6;
  const DeviceDataset data(pattern_split(50, classes), at::Device(at::kCPU));
  at::manual_seed(3);
  ModelConfig model;
  auto net = make_network(model, {1, 12, 12, classes});
  auto params = data.augment_params(0, false, 0, true);
  params.train = false;
  for (const Tta tta : {Tta::none, Tta::flip}) {
    ScoringOptions options;
    options.eval.batch = 16;
    options.eval.label_smoothing = 0.1;
    options.eval.tta = tta;
    options.classes = classes;
    options.keep_logits = 20;
    const SplitScores s = score_split(*net, data, params, options, test::world());
    const EvalResult reference = evaluate(*net, data, params, options.eval, test::world());
    net->eval();
    EXPECT_EQ(s.images, 50);
    EXPECT_NEAR(s.loss_sum / 50, reference.loss, 1e-12);
    EXPECT_DOUBLE_EQ(static_cast<double>(confusion_correct(s.confusion, classes)) / 50, reference.accuracy);
    EXPECT_EQ(confusion_total(s.confusion), 50);
    EXPECT_GE(s.top_k_hits, confusion_correct(s.confusion, classes));
    ASSERT_EQ(s.logits.size(), 20u * classes);
    ASSERT_EQ(s.labels.size(), 20u);
    at::NoGradGuard no_grad;
    const auto [x, y] = data.batch(at::arange(20, at::kLong), params, 0, at::kFloat, false);
    const auto plain = net->forward(x).contiguous();
    EXPECT_TRUE(at::allclose(at::from_blob(const_cast<float*>(s.logits.data()), {20, classes}), plain, 1e-5, 1e-6));
    EXPECT_TRUE(at::equal(at::tensor(s.labels, at::kLong), y));
  }
}

}  // namespace
}  // namespace ft
