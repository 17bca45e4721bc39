// Prediction over a batch of uint8 images: wraps them as a one-off DeviceDataset on the CPU so that the
// pixels go through the same gather/normalise kernel and test-time augmentation as the test split.
#include "evaluation/prediction.h"

#include "data/dataset.h"
#include "runtime/error.h"
#include "evaluation/evaluation.h"

namespace ft {

ShardMeta prediction_meta(const ModelInfo& info, std::int64_t count) {
  ShardMeta meta;
  meta.dataset = info.dataset;
  meta.split = "predict";
  meta.class_names = info.class_names;
  meta.mean = info.mean;
  meta.std = info.std;
  meta.count = count;
  meta.height = info.input.height;
  meta.width = info.input.width;
  meta.channels = info.input.channels;
  return meta;
}

at::Tensor class_probabilities(const TrainedModel& model, std::vector<std::uint8_t> images, std::int64_t count) {
  const ModelInfo& info = model.info;
  const auto image_bytes = static_cast<std::size_t>(info.input.height) * info.input.width * info.input.channels;
  FT_CHECK(images.size() == static_cast<std::size_t>(count) * image_bytes, images.size(), " bytes are not ",
           count, " images of ", image_bytes, " bytes");
  HostSplit split;
  split.meta = prediction_meta(info, count);
  split.total = count;
  split.images = std::move(images);
  split.labels.assign(static_cast<std::size_t>(count), 0);
  const DeviceDataset data(split, at::kCPU);
  AugmentParams params = data.augment_params(0, false, 0, info.config.data.normalize);
  params.train = false;
  at::NoGradGuard no_grad;
  const auto x = data.batch(at::arange(count, at::kLong), params, 0, at::kFloat, false).first;
  model.network->eval();
  return at::softmax(tta_logits(*model.network, x, info.config.train.tta), 1);
}

}  // namespace ft
