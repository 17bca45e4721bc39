// Checkpoint files use LibTorch's serialization archive (model and optimizer state as LibTorch writes
// them) with our position, history and RNG state beside them; the file appears only once complete.
#include "train/checkpoint.h"

#include <torch/serialize.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>
#include <torch/serialize/archive.h>


#include "config/fingerprint.h"
#include "io/checksummed_file.h"
#include "runtime/error.h"
#include "train/model_file.h"
#include "train/precision.h"
#include "train/rank_streams.h"

namespace ft {
namespace {

constexpr int kHistoryColumns = 9;
// Version of the checkpoint layout: 2 stores the model as flat "model.<name>" tensors.
constexpr std::int64_t kFormat = 2;

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

constexpr int kRankHistoryColumns = 6;

at::Tensor rank_history_tensor(const std::vector<RankEpochRecord>& rows) {
  auto t = at::zeros({static_cast<std::int64_t>(rows.size()), kRankHistoryColumns}, at::kDouble);
  auto a = t.accessor<double, 2>();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const double row[kRankHistoryColumns] = {double(r.rank), double(r.epoch), r.train_loss, r.train_acc,
                                             r.test_loss, r.test_acc};
    for (int k = 0; k < kRankHistoryColumns; ++k) a[static_cast<std::int64_t>(i)][k] = row[k];
  }
  return t;
}

std::vector<RankEpochRecord> rank_history_records(const at::Tensor& t) {
  std::vector<RankEpochRecord> out;
  auto a = t.accessor<double, 2>();
  for (std::int64_t i = 0; i < t.size(0); ++i)
    out.push_back({static_cast<int>(a[i][0]), static_cast<int>(a[i][1]), a[i][2], a[i][3], a[i][4], a[i][5]});
  return out;
}

at::Tensor read_tensor(torch::serialize::InputArchive& archive, const std::string& key) {
  at::Tensor t;
  archive.read(key, t);
  return t;
}

// LibTorch's optimizers restore their state tensors on the archive's device (the CPU here): move each
// to the device of the parameter it belongs to.
void move_optimizer_state(torch::optim::Optimizer& optimizer) {
  auto& state = optimizer.state();
  for (auto& group : optimizer.param_groups()) {
    for (auto& parameter : group.params()) {
      const auto it = state.find(parameter.unsafeGetTensorImpl());
      if (it == state.end()) continue;
      const at::Device device = parameter.device();
      auto move = [&](const at::Tensor& t) { return t.defined() ? t.to(device) : t; };
      auto* s = it->second.get();
      if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(s)) {
        sgd->momentum_buffer(move(sgd->momentum_buffer()));
      } else if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(s)) {
        adam->exp_avg(move(adam->exp_avg()));
        adam->exp_avg_sq(move(adam->exp_avg_sq()));
        adam->max_exp_avg_sq(move(adam->max_exp_avg_sq()));
      } else if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(s)) {
        adamw->exp_avg(move(adamw->exp_avg()));
        adamw->exp_avg_sq(move(adamw->exp_avg_sq()));
        adamw->max_exp_avg_sq(move(adamw->max_exp_avg_sq()));
      } else if (auto* rms = dynamic_cast<torch::optim::RMSpropParamState*>(s)) {
        rms->square_avg(move(rms->square_avg()));
        rms->momentum_buffer(move(rms->momentum_buffer()));
        rms->grad_avg(move(rms->grad_avg()));
      } else {
        FT_CHECK(false, "no rule to move this optimizer's state to ", device.str());
      }
    }
  }
}

void require_same_run(torch::serialize::InputArchive& archive, const std::string& path,
                      const std::string& fingerprint) {
  c10::IValue format, stored;
  FT_REQUIRE(archive.try_read("format", format) && format.isInt() && format.toInt() == kFormat, "checkpoint ", path,
             " was written by another fusetrain version (this one reads checkpoint format ", kFormat,
             "): remove it to start the run afresh");
  archive.read("fingerprint", stored);
  FT_REQUIRE(stored.isString(), "checkpoint ", path, " cannot be read (no run fingerprint)");
  const auto differences = fingerprint_differences(stored.toStringRef(), fingerprint);
  if (differences.empty()) return;
  std::string list;
  for (const auto& d : differences) list += cat(list.empty() ? "" : "; ", d);
  throw Error(cat("checkpoint ", path, " was written by a run with a different config: ", list,
                  ". Only train.epochs and where the run computes (train.device, train.threads, distributed.* "
                  "but compression, precision.channels_last, profile.*, train.eval_every, train.checkpoint_every, "
                  "train.checkpoint_every_s, train.keep_checkpoints) may "
                  "change on resume: remove the checkpoint or choose another output.name"));
}

TrainingPosition read_position(torch::serialize::InputArchive& archive) {
  TrainingPosition p;
  const auto position = read_tensor(archive, "position").to(at::kCPU);
  auto a = position.accessor<std::int64_t, 1>();
  p.epoch = static_cast<int>(a[0]);
  p.step = a[1];
  p.global_step = a[2];
  p.correct = a[3];
  p.skipped_steps = a[4];
  p.loss_sum = read_tensor(archive, "loss_sum").to(at::kCPU).item<double>();
  p.history = history_records(read_tensor(archive, "history").to(at::kCPU));
  at::Tensor rank_history;  // absent from checkpoints of versions that kept no per-rank figures
  if (archive.try_read("rank_history", rank_history)) p.rank_history = rank_history_records(rank_history.to(at::kCPU));
  return p;
}

// This rank's generators; a checkpoint from before per-rank streams holds rank 0's only ("rng_cpu").
void read_generators(torch::serialize::InputArchive& archive, const at::Device& device, int rank) {
  GeneratorState state;
  if (!archive.try_read(cat("rng_cpu_rank", rank), state.cpu)) state.cpu = read_tensor(archive, "rng_cpu");
  if (!archive.try_read(cat("rng_cuda_rank", rank), state.cuda)) archive.try_read("rng_cuda", state.cuda);
  restore_generators(state, device);
}

}  // namespace

void save_checkpoint(const std::string& path, const std::string& fingerprint, Network& network,
                     torch::optim::Optimizer& optimizer, const LossScaler& scaler, const TrainingPosition& p,
                     const at::Device& device, const std::vector<at::Tensor>& extra,
                     const std::vector<GeneratorState>& rank_generators) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive optimizer_archive;
  write_model_tensors(archive, network);
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("format", c10::IValue(kFormat));
  archive.write("fingerprint", c10::IValue(fingerprint));
  archive.write("position", at::tensor({static_cast<std::int64_t>(p.epoch), p.step, p.global_step, p.correct,
                                        p.skipped_steps}, at::kLong));
  archive.write("loss_sum", at::tensor({p.loss_sum}, at::kDouble));
  archive.write("history", history_tensor(p.history));
  archive.write("rank_history", rank_history_tensor(p.rank_history));
  archive.write("scaler_scale", scaler.scale_state().to(at::kCPU));
  archive.write("scaler_growth", scaler.growth_state().to(at::kCPU));
  const std::vector<GeneratorState> generators =
      rank_generators.empty() ? std::vector<GeneratorState>{capture_generators(device)} : rank_generators;
  for (std::size_t r = 0; r < generators.size(); ++r) {
    archive.write(cat("rng_cpu_rank", r), generators[r].cpu);
    if (generators[r].cuda.defined()) archive.write(cat("rng_cuda_rank", r), generators[r].cuda);
  }
  archive.write("extra_count", at::tensor({static_cast<std::int64_t>(extra.size())}, at::kLong));
  for (std::size_t i = 0; i < extra.size(); ++i) archive.write(cat("extra_", i), extra[i].detach().to(at::kCPU));
  write_checksummed_file(path, archive_bytes(archive, path, "checkpoint"));
}

// Everything is read onto the CPU first (a checkpoint of a GPU run resumes on a CPU host and the other
// way round), then copied or moved to where this run keeps it.
TrainingPosition load_checkpoint(const std::string& path, const std::string& fingerprint, Network& network,
                                 torch::optim::Optimizer& optimizer, LossScaler& scaler, const at::Device& device,
                                 const std::vector<at::Tensor>& extra, int rank) {
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path, at::Device(at::kCPU));
  } catch (const c10::Error& e) {
    throw Error(cat("checkpoint ", path, " cannot be read (truncated or not a fusetrain checkpoint): ",
                    e.what_without_backtrace()));
  }
  require_same_run(archive, path, fingerprint);
  read_model_tensors(archive, network, cat("checkpoint ", path));
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  optimizer.load(optimizer_archive);
  move_optimizer_state(optimizer);

  TrainingPosition p = read_position(archive);
  scaler.restore(read_tensor(archive, "scaler_scale"), read_tensor(archive, "scaler_growth"));
  const auto extra_count = read_tensor(archive, "extra_count").item<std::int64_t>();
  FT_REQUIRE(extra_count == static_cast<std::int64_t>(extra.size()), "checkpoint ", path, " holds ", extra_count,
             " extra state tensors but this run keeps ", extra.size());
  {
    at::NoGradGuard no_grad;
    for (std::size_t i = 0; i < extra.size(); ++i) extra[i].copy_(read_tensor(archive, cat("extra_", i)));
  }
  read_generators(archive, device, rank);
  return p;
}

}  // namespace ft
