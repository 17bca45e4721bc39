// Tests of class_probabilities: pixels normalised with the model's training mean/std exactly as the
// test split is (or left in [0,1] without data.normalize), logits under the run's tta, rows summing to 1.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/error.h"
#include "evaluation/evaluation.h"
#include "evaluation/prediction.h"

namespace ft {
namespace {

TrainedModel small_model(bool normalize, Tta tta) {
  TrainedModel model;
  model.info.config.data.normalize = normalize;
  model.info.config.train.tta = tta;
  model.info.input = {1, 10, 8, 4};
  model.info.class_names = {"a", "b", "c", "d"};
  model.info.mean = {0.3};
  model.info.std = {0.2};
  at::manual_seed(5);
  model.network = make_network(model.info.config.model, model.info.input);
  model.network->eval();
  return model;
}

std::vector<std::uint8_t> pixels(std::size_t n) {
  std::vector<std::uint8_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>((i * 53 + 7) % 256);
  return p;
}

// The network's input built by hand: [N,1,H,W] of (pixel/255 - mean)/std.
at::Tensor expected(TrainedModel& model, const std::vector<std::uint8_t>& images, std::int64_t n, bool normalize) {
  auto x = at::tensor(std::vector<float>(images.begin(), images.end())).reshape({n, 10, 8, 1}).permute({0, 3, 1, 2});
  x = x / 255.0f;
  if (normalize) x = (x - 0.3f) * static_cast<float>(1.0 / 0.2);
  at::NoGradGuard no_grad;
  return at::softmax(tta_logits(*model.network, x.contiguous(), model.info.config.train.tta), 1);
}

TEST(Prediction, NormalisesWithTheTrainingMeanAndStdAndAppliesTheRunsTta) {
  for (bool normalize : {true, false})
    for (Tta tta : {Tta::none, Tta::flip}) {
      auto model = small_model(normalize, tta);
      const auto images = pixels(3 * 10 * 8);
      const auto probabilities = class_probabilities(model, images, 3);
      ASSERT_EQ(probabilities.sizes(), (at::IntArrayRef{3, 4}));
      EXPECT_TRUE(at::allclose(probabilities, expected(model, images, 3, normalize), 1e-5, 1e-6))
          << "normalize " << normalize << " tta " << static_cast<int>(tta);
      EXPECT_TRUE(at::allclose(probabilities.sum(1), at::ones({3})));
    }
}

TEST(Prediction, RefusesPixelsOfAnotherSize) {
  auto model = small_model(true, Tta::none);
  EXPECT_THROW(class_probabilities(model, pixels(2 * 10 * 8 + 1), 2), Error);
}

}  // namespace
}  // namespace ft
