// Test-set evaluation: loss and accuracy over this rank's part of the test split, summed over all ranks,
// with optional test-time augmentation (logits averaged over flips and 1-pixel translations).
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <string>

#include "config/choices.h"
#include "config/schema.h"
#include "data/dataset.h"
#include "models/network.h"

namespace ft {

class World;

struct EvalResult {
  double loss = 0, accuracy = 0;          // over the whole test split (every rank's slice)
  double own_loss = 0, own_accuracy = 0;  // over this rank's slice only, before the sums are reduced
  std::int64_t own_images = 0;            // images in this rank's slice
};

struct EvalOptions {
  int batch = 256;
  at::ScalarType input_dtype = at::kFloat, amp_dtype = at::kFloat;
  bool channels_last = false;
  double label_smoothing = 0;
  Tta tta = Tta::none;
};

// The evaluation settings of a run's config: data.test_batch_size, the input and autocast dtypes of its
// precision (as training uses them), channels_last, label smoothing and train.tta.
EvalOptions eval_options(const Config& config);

// The logits of `x` under test-time augmentation `tta`: none; flip (the mean over x and its mirror
// image); flip_translate (half that, plus a quarter each of the same mean for x shifted by one pixel
// down-right and up-left, reflect-padded).
at::Tensor tta_logits(Network& net, const at::Tensor& x, Tta tta);

// One batch of an evaluation pass: the network's input, its fp32 logits under the test-time augmentation,
// the labels, and the local index of the batch's first image.
struct EvalBatch {
  const at::Tensor& x;
  const at::Tensor& logits;
  const at::Tensor& labels;
  std::int64_t begin;
};

// Runs `net` without gradients over `data` in order, in batches of options.batch assembled without
// augmentation (params.train false) under the options' autocast, and hands each batch to `visit`
// (outside the autocast): the one evaluation path of training and `fusetrain evaluate`.
// With `every` > 1, only batches first, first + every, ... (a rank's share of batches numbered over the
// whole split).
void for_each_eval_batch(Network& net, const DeviceDataset& data, const AugmentParams& params,
                         const EvalOptions& options, const std::function<void(const EvalBatch&)>& visit,
                         std::int64_t first = 0, std::int64_t every = 1);

// Global test loss and accuracy, and this rank's own figures on its slice (collective: every rank calls
// it); the network is left in train mode.
EvalResult evaluate(Network& net, const DeviceDataset& test, const AugmentParams& params, const EvalOptions& options,
                    const World& world);

// distributed.reproducible: `test` is the whole split on every rank and rank r scores batches r, r + N, ...;
// every batch's loss sum and correct count are gathered and added in batch order, so the figures are the
// same bits on any number of ranks. Own figures: this rank's batches.
EvalResult evaluate_in_fixed_batches(Network& net, const DeviceDataset& test, const AugmentParams& params,
                                     const EvalOptions& options, const World& world);

}  // namespace ft
