// Checkpoint files use LibTorch's serialization archive (model and optimizer state as LibTorch writes
// them) with our position, history and RNG state beside them; the file appears only once complete.
#include "train/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize.h>
#include <torch/serialize/archive.h>

#ifdef FUSETRAIN_WITH_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#endif

#include <sstream>

#include "io/atomic_file.h"
#include "runtime/error.h"
#include "train/precision.h"

namespace ft {
namespace {

constexpr int kHistoryColumns = 9;

at::Tensor history_tensor(const std::vector<EpochRecord>& history) {
  auto t = at::zeros({static_cast<std::int64_t>(history.size()), kHistoryColumns}, at::kDouble);
  auto a = t.accessor<double, 2>();
  for (std::size_t i = 0; i < history.size(); ++i) {
    const auto& e = history[i];
    const double row[kHistoryColumns] = {double(e.epoch), e.train_loss, e.train_acc, e.test_loss, e.test_acc,
                                         e.lr, e.epoch_time_s, e.images_per_s, e.evaluated ? 1.0 : 0.0};
    for (int k = 0; k < kHistoryColumns; ++k) a[static_cast<std::int64_t>(i)][k] = row[k];
  }
  return t;
}

std::vector<EpochRecord> history_records(const at::Tensor& t) {
  std::vector<EpochRecord> out;
  auto a = t.accessor<double, 2>();
  for (std::int64_t i = 0; i < t.size(0); ++i)
    out.push_back({static_cast<int>(a[i][0]), a[i][1], a[i][2], a[i][3], a[i][4], a[i][5], a[i][6], a[i][7],
                   a[i][8] != 0});
  return out;
}

at::Tensor read_tensor(torch::serialize::InputArchive& archive, const std::string& key) {
  at::Tensor t;
  archive.read(key, t);
  return t;
}

}  // namespace

void save_checkpoint(const std::string& path, const std::string& fingerprint, Network& network,
                     torch::optim::Optimizer& optimizer, const LossScaler& scaler, const TrainingPosition& p,
                     const at::Device& device, const std::vector<at::Tensor>& extra) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive, optimizer_archive;
  network.save(model_archive);
  optimizer.save(optimizer_archive);
  archive.write("model", model_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("fingerprint", c10::IValue(fingerprint));
  archive.write("position", at::tensor({static_cast<std::int64_t>(p.epoch), p.step, p.global_step, p.correct,
                                        p.skipped_steps}, at::kLong));
  archive.write("loss_sum", at::tensor({p.loss_sum}, at::kDouble));
  archive.write("history", history_tensor(p.history));
  archive.write("scaler_scale", scaler.scale_state().to(at::kCPU));
  archive.write("scaler_growth", scaler.growth_state().to(at::kCPU));
  archive.write("rng_cpu", at::detail::getDefaultCPUGenerator().get_state());
  archive.write("extra_count", at::tensor({static_cast<std::int64_t>(extra.size())}, at::kLong));
  for (std::size_t i = 0; i < extra.size(); ++i) archive.write(cat("extra_", i), extra[i].detach().to(at::kCPU));
#ifdef FUSETRAIN_WITH_CUDA
  if (device.is_cuda()) archive.write("rng_cuda", at::cuda::detail::getDefaultCUDAGenerator(device.index()).get_state());
#endif
  // Serialise in memory, then write with checked system calls: LibTorch's file writer throws from a
  // destructor when the disk fills, which would terminate the process.
  std::ostringstream bytes;
  try {
    archive.save_to(bytes);
  } catch (const c10::Error& e) {
    throw Error(cat("cannot serialise checkpoint ", path, ": ", e.what_without_backtrace()));
  }
  write_file_atomically(path, bytes.str());
}

TrainingPosition load_checkpoint(const std::string& path, const std::string& fingerprint, Network& network,
                                 torch::optim::Optimizer& optimizer, LossScaler& scaler, const at::Device& device,
                                 const std::vector<at::Tensor>& extra) {
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path, device);
  } catch (const c10::Error& e) {
    throw Error(cat("checkpoint ", path, " cannot be read (truncated or not a fusetrain checkpoint): ",
                    e.what_without_backtrace()));
  }
  c10::IValue stored;
  archive.read("fingerprint", stored);
  FT_REQUIRE(stored.isString() && stored.toStringRef() == fingerprint, "checkpoint ", path,
             " was written by a run with a different config (only train.epochs may change on resume): "
             "remove it or choose another output.name");
  torch::serialize::InputArchive model_archive, optimizer_archive;
  archive.read("model", model_archive);
  archive.read("optimizer", optimizer_archive);
  network.load(model_archive);
  optimizer.load(optimizer_archive);

  TrainingPosition p;
  const auto position = read_tensor(archive, "position");
  auto a = position.accessor<std::int64_t, 1>();
  p.epoch = static_cast<int>(a[0]);
  p.step = a[1];
  p.global_step = a[2];
  p.correct = a[3];
  p.skipped_steps = a[4];
  p.loss_sum = read_tensor(archive, "loss_sum").to(at::kCPU).item<double>();
  p.history = history_records(read_tensor(archive, "history").to(at::kCPU));
  scaler.restore(read_tensor(archive, "scaler_scale"), read_tensor(archive, "scaler_growth"));
  const auto extra_count = read_tensor(archive, "extra_count").to(at::kCPU).item<std::int64_t>();
  FT_REQUIRE(extra_count == static_cast<std::int64_t>(extra.size()), "checkpoint ", path, " holds ", extra_count,
             " extra state tensors but this run keeps ", extra.size());
  {
    at::NoGradGuard no_grad;
    for (std::size_t i = 0; i < extra.size(); ++i) extra[i].copy_(read_tensor(archive, cat("extra_", i)));
  }
  at::Generator cpu_generator = at::detail::getDefaultCPUGenerator();
  cpu_generator.set_state(read_tensor(archive, "rng_cpu").to(at::kCPU));
#ifdef FUSETRAIN_WITH_CUDA
  if (device.is_cuda()) {
    at::Generator generator = at::cuda::detail::getDefaultCUDAGenerator(device.index());
    generator.set_state(read_tensor(archive, "rng_cuda").to(at::kCPU));
  }
#endif
  return p;
}

}  // namespace ft
