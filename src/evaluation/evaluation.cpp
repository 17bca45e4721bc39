// Evaluation over the test split: batches assembled without augmentation, logits averaged over the
// test-time augmentations, loss and correct counts accumulated on the device and reduced once at the end.
#include "evaluation/evaluation.h"

#include <algorithm>

#include "comm/stall_inspector.h"
#include "runtime/error.h"
#include "runtime/world.h"
#include "optim/precision.h"

namespace ft {
namespace {

// Logits for the loss: fp32 from half-precision forwards, fp64 kept in fp64 runs (whose figures must not
// depend on how the test split is sliced over ranks, which fp32 sums would).
at::Tensor loss_logits(const at::Tensor& logits) {
  return logits.scalar_type() == at::kDouble ? logits : logits.to(at::kFloat);
}

at::Tensor flip_mean(Network& net, const at::Tensor& x) {
  return 0.5 * (loss_logits(net.forward(x)) + loss_logits(net.forward(x.flip({3}))));
}

}  // namespace

EvalOptions eval_options(const Config& c) {
  const at::ScalarType dtype = training_dtype(c.precision.dtype);
  EvalOptions options;
  options.batch = c.data.test_batch_size;
  options.input_dtype = dtype == at::kDouble ? at::kDouble : at::kFloat;
  options.amp_dtype = (dtype == at::kHalf || dtype == at::kBFloat16) ? dtype : at::kFloat;
  options.channels_last = c.precision.channels_last;
  options.label_smoothing = c.regularization.label_smoothing;
  options.tta = c.train.tta;
  return options;
}

at::Tensor tta_logits(Network& net, const at::Tensor& x, Tta tta) {
  if (tta == Tta::none) return loss_logits(net.forward(x));
  if (tta == Tta::flip) return flip_mean(net, x);
  FT_CHECK(tta == Tta::flip_translate, "unknown test-time augmentation '", tta, "'");
  const std::int64_t h = x.size(2), w = x.size(3);
  const auto padded = at::reflection_pad2d(x, {1, 1, 1, 1});
  const auto down_right = padded.narrow(2, 0, h).narrow(3, 0, w);
  const auto up_left = padded.narrow(2, 2, h).narrow(3, 2, w);
  return 0.5 * flip_mean(net, x) + 0.25 * flip_mean(net, down_right.contiguous(x.suggest_memory_format())) +
         0.25 * flip_mean(net, up_left.contiguous(x.suggest_memory_format()));
}

void for_each_eval_batch(Network& net, const DeviceDataset& data, const AugmentParams& params,
                         const EvalOptions& options, const std::function<void(const EvalBatch&)>& visit,
                         std::int64_t first, std::int64_t every) {
  at::NoGradGuard no_grad;
  for (std::int64_t begin = first * options.batch; begin < data.size(); begin += every * options.batch) {
    const std::int64_t n = std::min<std::int64_t>(options.batch, data.size() - begin);
    const auto idx = at::arange(begin, begin + n, at::TensorOptions().dtype(at::kLong));
    auto [x, y] = data.batch(idx, params, 0, options.input_dtype, options.channels_last);
    at::Tensor logits;
    {
      AutocastScope autocast(data.device(), options.amp_dtype);
      logits = tta_logits(net, x, options.tta);
    }
    visit({x, logits, y, begin});
  }
}

EvalResult evaluate(Network& net, const DeviceDataset& test, const AugmentParams& params, const EvalOptions& options,
                    const World& world) {
  net.eval();
  const auto device = test.device();
  auto loss_sum = at::zeros({1}, at::TensorOptions().device(device).dtype(at::kDouble));
  auto correct = at::zeros({1}, at::TensorOptions().device(device).dtype(at::kLong));
  for_each_eval_batch(net, test, params, options, [&](const EvalBatch& b) {
    loss_sum += at::cross_entropy_loss(b.logits, b.labels, {}, at::Reduction::Sum, -100, options.label_smoothing)
                    .to(at::kDouble);
    correct += b.logits.argmax(1).eq(b.labels).sum();
  });
  double sums[3] = {loss_sum.item<double>(), static_cast<double>(correct.item<std::int64_t>()),
                    static_cast<double>(test.size())};
  EvalResult result;
  result.own_images = test.size();
  result.own_loss = sums[0] / std::max(1.0, sums[2]);
  result.own_accuracy = sums[1] / std::max(1.0, sums[2]);
  {
    const CollectiveLabel label("evaluation metrics");
    world.allreduce_sum(sums, 3);
  }
  net.train();
  result.loss = sums[0] / std::max(1.0, sums[2]);
  result.accuracy = sums[1] / std::max(1.0, sums[2]);
  return result;
}

namespace {

// One scored batch: its number over the whole split, loss sum, correct count and images.
struct BatchFigures {
  std::int64_t batch;
  double loss;
  std::int64_t correct, images;
};

// Every rank's batches, in batch order (the all-gather's bytes are the records themselves).
std::vector<BatchFigures> gathered_in_order(const std::vector<BatchFigures>& mine, const World& world) {
  std::string bytes(reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(BatchFigures));
  std::vector<BatchFigures> all;
  {
    const CollectiveLabel label("evaluation batches");
    for (const std::string& theirs : world.allgather(bytes)) {
      const auto* begin = reinterpret_cast<const BatchFigures*>(theirs.data());
      all.insert(all.end(), begin, begin + theirs.size() / sizeof(BatchFigures));
    }
  }
  std::sort(all.begin(), all.end(), [](const BatchFigures& a, const BatchFigures& b) { return a.batch < b.batch; });
  return all;
}

}  // namespace

EvalResult evaluate_in_fixed_batches(Network& net, const DeviceDataset& test, const AugmentParams& params,
                                     const EvalOptions& options, const World& world) {
  net.eval();
  std::vector<at::Tensor> losses, corrects;
  std::vector<BatchFigures> mine;
  for_each_eval_batch(net, test, params, options, [&](const EvalBatch& b) {
    losses.push_back(at::cross_entropy_loss(b.logits, b.labels, {}, at::Reduction::Sum, -100, options.label_smoothing)
                         .to(at::kDouble));
    corrects.push_back(b.logits.argmax(1).eq(b.labels).sum());
    mine.push_back({b.begin / options.batch, 0, 0, b.labels.size(0)});
  }, world.rank(), world.size());
  if (!mine.empty()) {  // one device read for all of them
    const auto loss = at::stack(losses).to(at::kCPU), correct = at::stack(corrects).to(at::kCPU);
    for (std::size_t i = 0; i < mine.size(); ++i)
      mine[i].loss = loss[i].item<double>(), mine[i].correct = correct[i].item<std::int64_t>();
  }
  EvalResult result;
  double sums[3] = {0, 0, 0};
  for (const BatchFigures& f : mine) sums[0] += f.loss, sums[1] += f.correct, sums[2] += f.images;
  result.own_images = static_cast<std::int64_t>(sums[2]);
  result.own_loss = sums[0] / std::max(1.0, sums[2]);
  result.own_accuracy = sums[1] / std::max(1.0, sums[2]);
  sums[0] = sums[1] = sums[2] = 0;
  for (const BatchFigures& f : gathered_in_order(mine, world)) sums[0] += f.loss, sums[1] += f.correct, sums[2] += f.images;
  net.train();
  result.loss = sums[0] / std::max(1.0, sums[2]);
  result.accuracy = sums[1] / std::max(1.0, sums[2]);
  return result;
}

}  // namespace ft
