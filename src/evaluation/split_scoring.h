// The scores of a trained network on one split, each rank over its contiguous slice and reduced over all
// ranks: loss, top-1 and top-k hits, the confusion matrix, and the fp32 logits of the split's first images.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "data/dataset.h"
#include "models/network.h"
#include "evaluation/evaluation.h"

namespace ft {

class World;

struct ScoringOptions {
  EvalOptions eval;                // batch, dtypes, label smoothing, test-time augmentation
  int classes = 0;
  std::int64_t first = 0;          // global index of this rank's first image (its slice's begin)
  std::int64_t keep_logits = 0;    // logits and labels of the split's first keep_logits images
};

// Global sums, identical on every rank; logits and labels in split order.
struct SplitScores {
  std::int64_t images = 0;
  double loss_sum = 0;
  std::int64_t top_k_hits = 0;          // images whose label is among the top min(5, classes) logits
  std::vector<std::int64_t> confusion;  // classes x classes, rows true class, columns predicted
  std::vector<float> logits;            // rows x classes: no test-time augmentation, before softmax
  std::vector<std::int64_t> labels;     // rows
};

// Collective: every rank calls it with its slice. The network is left in eval mode.
SplitScores score_split(Network& net, const DeviceDataset& data, const AugmentParams& params,
                        const ScoringOptions& options, const World& world);

// Images of a batch whose label is among the top `k` logits (k capped at the class count): int64 scalar.
at::Tensor top_k_hits(const at::Tensor& logits, const at::Tensor& labels, int k);
// classes x classes int64 counts of (label, prediction) pairs: rows true class, columns predicted.
at::Tensor confusion_counts(const at::Tensor& predicted, const at::Tensor& labels, int classes);

}  // namespace ft
