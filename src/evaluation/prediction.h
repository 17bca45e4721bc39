// Class probabilities of a trained network for images given as uint8 pixels, fed through evaluation's
// own path: DeviceDataset's batch assembly (normalisation, no augmentation) and tta_logits.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "checkpoint/model_file.h"

namespace ft {

// The ShardMeta a split of `count` images needs to be fed to `info`'s network: its shape, classes,
// and the training mean and std that normalisation uses.
ShardMeta prediction_meta(const ModelInfo& info, std::int64_t count);

// Softmax probabilities [count, classes] (CPU, float) for `count` images stored NHWC in `images`, each of
// the model's input shape (height x width x channels bytes). Pixels reach the network exactly as in the
// run's test evaluation: normalised with the training mean/std when config.data.normalize, and the
// logits taken under its train.tta.
at::Tensor class_probabilities(const TrainedModel& model, std::vector<std::uint8_t> images, std::int64_t count);

}  // namespace ft
