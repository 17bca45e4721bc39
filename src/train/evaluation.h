// Test-set evaluation: loss and accuracy over this rank's part of the test split, summed over all ranks,
// with optional test-time augmentation (logits averaged over flips and 1-pixel translations).
#pragma once

#include <ATen/ATen.h>

#include <string>

#include "config/choices.h"
#include "data/dataset.h"
#include "models/network.h"

namespace ft {

class World;

struct EvalResult {
  double loss = 0, accuracy = 0;
};

struct EvalOptions {
  int batch = 256;
  at::ScalarType input_dtype = at::kFloat, amp_dtype = at::kFloat;
  bool channels_last = false;
  double label_smoothing = 0;
  Tta tta = Tta::none;
};

// The logits of `x` under test-time augmentation `tta`: none; flip (the mean over x and its mirror
// image); flip_translate (half that, plus a quarter each of the same mean for x shifted by one pixel
// down-right and up-left, reflect-padded).
at::Tensor tta_logits(Network& net, const at::Tensor& x, Tta tta);

// Global test loss and accuracy (collective: every rank calls it); the network is left in train mode.
EvalResult evaluate(Network& net, const DeviceDataset& test, const AugmentParams& params, const EvalOptions& options,
                    const World& world);

}  // namespace ft
