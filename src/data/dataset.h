// A rank's part of one split held as uint8 NHWC on the training device (GPU memory on CUDA hosts),
// with batch assembly (gather + augment + normalise) done by the kernels in kernels/augment.h.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "config/schema.h"
#include "shard/shard_reader.h"
#include "kernels/augment.h"

namespace ft {

// Sets the per-channel normalisation of `params` (its channels already set) to (x - mean) / std, or to the
// identity when !normalize. Missing or zero stds are errors naming `source` (e.g. "data set cifar10").
void set_normalization(AugmentParams& params, const std::vector<double>& mean, const std::vector<double>& std,
                       bool normalize, const std::string& source);

class DeviceDataset {
 public:
  // Throws ft::Error naming train.device when `device` is a GPU but this build has no CUDA kernels.
  DeviceDataset(const HostSplit& split, at::Device device);

  std::int64_t size() const { return labels_.size(0); }
  const ShardMeta& meta() const { return meta_; }
  at::Device device() const { return images_.device(); }
  const at::Tensor& labels() const { return labels_; }

  // Normalisation and augmentation settings for this data set (mean/std from the shard attributes).
  AugmentParams augment_params(int crop_padding, bool flip, int cutout, bool normalize) const;
  // Every data.augment setting; image_seed seeds the per-image draws of alternating flips.
  AugmentParams augment_params(const AugmentConfig& augment, std::uint64_t image_seed, bool normalize) const;

  // indices: int64 local indices (any device). Returns (images [B,C,H,W] of `dtype`, labels int64 [B])
  // on the dataset's device. position_base seeds the per-sample augmentation stream.
  std::pair<at::Tensor, at::Tensor> batch(const at::Tensor& indices, AugmentParams params,
                                          std::int64_t position_base, at::ScalarType dtype,
                                          bool channels_last) const;

 private:
  ShardMeta meta_;
  at::Tensor images_;  // uint8 [N,H,W,C]
  at::Tensor labels_;  // int64 [N]
};

}  // namespace ft
