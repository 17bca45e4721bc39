// Upload of a rank's images to the device once per run, and per-step batch assembly. On CPU the
// batch is split across at::parallel_for threads; on CUDA the kernels run on the current stream.
#include "data/dataset.h"

#include <ATen/DeviceAccelerator.h>
#include <ATen/Parallel.h>

#include "runtime/error.h"

namespace ft {

DeviceDataset::DeviceDataset(const HostSplit& split, at::Device device) : meta_(split.meta) {
  FT_REQUIRE(!device.is_cuda() || cuda_kernels_built(), "train.device: training on ", device.str(),
             " needs the CUDA kernels, but this fusetrain was built without CUDA: set train.device: cpu, or "
             "rebuild on a host with nvcc (cmake -DFUSETRAIN_CUDA=ON)");
  const auto n = split.size();
  const auto host_images = at::from_blob(const_cast<std::uint8_t*>(split.images.data()),
                                         {n, meta_.height, meta_.width, meta_.channels}, at::kByte);
  const auto host_labels = at::from_blob(const_cast<std::int32_t*>(split.labels.data()), {n}, at::kInt);
  images_ = host_images.to(device, /*non_blocking=*/false, /*copy=*/true);
  labels_ = host_labels.to(device, at::kLong, false, true);
}

void set_normalization(AugmentParams& params, const std::vector<double>& mean, const std::vector<double>& std,
                       bool normalize, const std::string& source) {
  FT_REQUIRE(!normalize || (static_cast<int>(mean.size()) >= params.channels &&
                            static_cast<int>(std.size()) >= params.channels),
             source, " has ", mean.size(), " means and ", std.size(), " stds for ", params.channels, " channels");
  for (int c = 0; c < params.channels; ++c) {
    FT_REQUIRE(!normalize || std[c] > 0, source, " has std 0 in channel ", c,
               ": cannot normalize (set data.normalize: false)");
    params.mean[c] = normalize ? static_cast<float>(mean[c]) : 0.0f;
    params.inv_std[c] = normalize ? static_cast<float>(1.0 / std[c]) : 1.0f;
  }
}

AugmentParams DeviceDataset::augment_params(int crop_padding, bool flip, int cutout, bool normalize) const {
  AugmentParams p;
  p.height = meta_.height;
  p.width = meta_.width;
  p.channels = meta_.channels;
  p.crop_padding = crop_padding;
  p.flip = flip;
  p.cutout = cutout;
  set_normalization(p, meta_.mean, meta_.std, normalize, cat("data set ", meta_.dataset));
  return p;
}

AugmentParams DeviceDataset::augment_params(const AugmentConfig& augment, std::uint64_t image_seed,
                                            bool normalize) const {
  AugmentParams p = augment_params(augment.crop_padding, augment.flip, augment.cutout, normalize);
  p.alternate_flip = augment.alternate_flip;
  p.image_seed = image_seed;
  p.brightness = static_cast<float>(augment.brightness);
  p.contrast = static_cast<float>(augment.contrast);
  p.saturation = static_cast<float>(augment.saturation);
  p.rotation_degrees = static_cast<float>(augment.rotation_degrees);
  return p;
}

std::pair<at::Tensor, at::Tensor> DeviceDataset::batch(const at::Tensor& indices, AugmentParams params,
                                                       std::int64_t position_base, at::ScalarType dtype,
                                                       bool channels_last) const {
  const auto idx = indices.to(images_.device(), at::kLong).contiguous();
  const std::int64_t b = idx.size(0);
  params.nhwc = channels_last;  // the kernel writes the layout the network takes: no reordering copy
  auto out = at::empty({b, meta_.channels, meta_.height, meta_.width}, images_.options().dtype(at::kFloat),
                       channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous);
  if (images_.is_cuda()) {
    const auto stream = at::accelerator::getCurrentStream(images_.device().index());
    auto scratch = at::empty({params.contrast > 0 ? b : 0}, out.options());
    augment_batch_device(images_.data_ptr<std::uint8_t>(), idx.data_ptr<std::int64_t>(), b, position_base, params,
                         out.data_ptr<float>(), scratch.numel() > 0 ? scratch.data_ptr<float>() : nullptr,
                         static_cast<cudaStream_t>(stream.native_handle()));
  } else {
    const std::uint8_t* images = images_.data_ptr<std::uint8_t>();
    const std::int64_t* rows = idx.data_ptr<std::int64_t>();
    float* dst = out.data_ptr<float>();
    at::parallel_for(0, b, 8, [&](std::int64_t begin, std::int64_t end) {
      augment_batch_cpu(images, rows, begin, end, position_base, params, dst);
    });
  }
  if (dtype != at::kFloat) out = out.to(dtype);  // keeps the memory format
  return {out, labels_.index_select(0, idx)};
}

}  // namespace ft
