// Scoring of a split on the evaluation path training uses (for_each_eval_batch): sums and the confusion
// matrix accumulate on the device and are reduced once; kept logits travel to every rank in rank order,
// which is split order because each rank holds a contiguous slice.
#include "evaluation/split_scoring.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "comm/stall_inspector.h"
#include "results/class_metrics.h"
#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {
namespace {

// This rank's kept rows: plain fp32 logits (no test-time augmentation, no autocast) and labels.
struct KeptRows {
  std::vector<float> logits;
  std::vector<std::int64_t> labels;
};

void keep_rows(Network& net, const EvalBatch& b, const ScoringOptions& o, KeptRows& kept) {
  const std::int64_t n = std::min<std::int64_t>(b.labels.size(0), o.keep_logits - (o.first + b.begin));
  if (n <= 0) return;
  const bool plain = o.eval.tta == Tta::none && o.eval.amp_dtype == at::kFloat && o.eval.input_dtype == at::kFloat;
  const auto logits = (plain ? b.logits : net.forward(b.x)).to(at::kFloat).narrow(0, 0, n).cpu().contiguous();
  const auto labels = b.labels.narrow(0, 0, n).cpu().contiguous();
  kept.logits.insert(kept.logits.end(), logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel());
  kept.labels.insert(kept.labels.end(), labels.data_ptr<std::int64_t>(), labels.data_ptr<std::int64_t>() + n);
}

std::string pack(const KeptRows& kept) {
  const std::size_t floats = kept.logits.size() * sizeof(float), ints = kept.labels.size() * sizeof(std::int64_t);
  std::string bytes(sizeof(std::int64_t) + floats + ints, '\0');
  const auto rows = static_cast<std::int64_t>(kept.labels.size());
  std::memcpy(bytes.data(), &rows, sizeof rows);
  if (floats) std::memcpy(bytes.data() + sizeof rows, kept.logits.data(), floats);
  if (ints) std::memcpy(bytes.data() + sizeof rows + floats, kept.labels.data(), ints);
  return bytes;
}

void unpack(const std::string& bytes, int classes, int rank, SplitScores& out) {
  std::int64_t rows = 0;
  FT_CHECK(bytes.size() >= sizeof rows, "rank ", rank, " sent ", bytes.size(), " bytes of logits");
  std::memcpy(&rows, bytes.data(), sizeof rows);
  const std::size_t floats = static_cast<std::size_t>(rows) * classes;
  FT_CHECK(bytes.size() == sizeof rows + floats * sizeof(float) + rows * sizeof(std::int64_t), "rank ", rank,
           " sent ", bytes.size(), " bytes for ", rows, " rows of logits");
  const std::size_t at = out.logits.size(), label_at = out.labels.size();
  out.logits.resize(at + floats);
  out.labels.resize(label_at + static_cast<std::size_t>(rows));
  std::memcpy(out.logits.data() + at, bytes.data() + sizeof rows, floats * sizeof(float));
  std::memcpy(out.labels.data() + label_at, bytes.data() + sizeof rows + floats * sizeof(float),
              rows * sizeof(std::int64_t));
}

// Sums every rank's loss, images, top-k hits and confusion counts (exact: counts stay far below 2^53).
void reduce_sums(const at::Tensor& loss, std::int64_t images, const at::Tensor& hits, const at::Tensor& confusion,
                 const World& world, SplitScores& out) {
  const auto counts = confusion.to(at::kCPU).contiguous();
  std::vector<double> sums = {loss.item<double>(), static_cast<double>(images),
                              static_cast<double>(hits.item<std::int64_t>())};
  const std::int64_t* cells = counts.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < counts.numel(); ++i) sums.push_back(static_cast<double>(cells[i]));
  const CollectiveLabel label("evaluation scores");
  world.allreduce_sum(sums.data(), static_cast<int>(sums.size()));
  out.loss_sum = sums[0];
  out.images = static_cast<std::int64_t>(sums[1]);
  out.top_k_hits = static_cast<std::int64_t>(sums[2]);
  for (std::size_t i = 3; i < sums.size(); ++i) out.confusion.push_back(static_cast<std::int64_t>(sums[i]));
}

}  // namespace

at::Tensor top_k_hits(const at::Tensor& logits, const at::Tensor& labels, int k) {
  const auto top = std::get<1>(logits.topk(std::min<std::int64_t>(k, logits.size(1)), 1));
  return top.eq(labels.unsqueeze(1)).any(1).sum();
}

at::Tensor confusion_counts(const at::Tensor& predicted, const at::Tensor& labels, int classes) {
  const auto cells = labels.to(at::kLong) * classes + predicted.to(at::kLong);
  auto counts = at::zeros({std::int64_t{classes} * classes}, cells.options());
  return counts.index_add_(0, cells, at::ones_like(cells)).view({classes, classes});
}

SplitScores score_split(Network& net, const DeviceDataset& data, const AugmentParams& params,
                        const ScoringOptions& options, const World& world) {
  FT_CHECK(options.classes > 0, "scoring needs the class count");
  net.eval();
  const auto on_device = at::TensorOptions().device(data.device());
  auto loss_sum = at::zeros({}, on_device.dtype(at::kDouble));
  auto hits = at::zeros({}, on_device.dtype(at::kLong));
  auto confusion = at::zeros({options.classes, options.classes}, on_device.dtype(at::kLong));
  KeptRows kept;
  for_each_eval_batch(net, data, params, options.eval, [&](const EvalBatch& b) {
    loss_sum += at::cross_entropy_loss(b.logits, b.labels, {}, at::Reduction::Sum, -100, options.eval.label_smoothing)
                    .to(at::kDouble);
    hits += top_k_hits(b.logits, b.labels, top_k_of(options.classes));
    confusion += confusion_counts(b.logits.argmax(1), b.labels, options.classes);
    if (options.keep_logits > 0) keep_rows(net, b, options, kept);
  });
  SplitScores out;
  reduce_sums(loss_sum, data.size(), hits, confusion, world, out);
  if (options.keep_logits <= 0) return out;
  const CollectiveLabel label("evaluation logits");
  const auto parts = world.allgather(pack(kept));
  for (std::size_t r = 0; r < parts.size(); ++r) unpack(parts[r], options.classes, static_cast<int>(r), out);
  return out;
}

}  // namespace ft
