// Checkpoint files use LibTorch's serialization archive (model and optimizer state as LibTorch writes
// them) with our position, history and RNG state beside them; the file appears only once complete.
#include "checkpoint/checkpoint.h"

#include <torch/serialize.h>
#include <torch/serialize/archive.h>


#include "config/fingerprint.h"
#include "io/checksummed_file.h"
#include "io/paths.h"
#include "results/field_text.h"
#include "results/results_fields.h"
#include "runtime/error.h"
#include "checkpoint/model_file.h"
#include "optim/optimizer.h"
#include "optim/precision.h"
#include "optim/rank_streams.h"

namespace ft {
namespace {

// Version of the checkpoint layout: 3 stores the position as a place in the epoch's global sample order
// and the history, per-rank figures and segments as the results file's field tables (tab-separated text).
constexpr std::int64_t kFormat = 3;

at::Tensor read_tensor(torch::serialize::InputArchive& archive, const std::string& key) {
  at::Tensor t;
  archive.read(key, t);
  return t;
}

// LibTorch's optimizers restore their state tensors on the archive's device (the CPU here): move each
// to the device of the parameters.
void move_optimizer_state(torch::optim::Optimizer& optimizer, const at::Device& device) {
  update_optimizer_state(optimizer, [&](const std::string&, const at::Tensor& t) { return t.to(device); });
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
                  ". Only train.epochs, the number of ranks (elastic.* says how the batch follows) and where the run "
                  "computes (train.device, train.threads, distributed.* but compression, powersgd_*, reproducible and "
                  "micro_batches, precision.channels_last, "
                  "profile.*, train.eval_every, train.checkpoint_every, train.checkpoint_every_s, "
                  "train.keep_checkpoints) may change on resume. To continue that run, give these keys the "
                  "checkpoint's values; to start a separate run, choose another output.name (the checkpoint is kept)"));
}

std::string read_text(torch::serialize::InputArchive& archive, const std::string& key) {
  c10::IValue value;
  archive.read(key, value);
  FT_CHECK(value.isString(), "checkpoint entry ", key, " is not text");
  return value.toStringRef();
}

TrainingPosition read_position(torch::serialize::InputArchive& archive, const std::string& path) {
  TrainingPosition p;
  const auto position = read_tensor(archive, "position").to(at::kCPU);
  auto a = position.accessor<std::int64_t, 1>();
  p.epoch = static_cast<int>(a[0]);
  p.step = a[1];
  p.global_step = a[2];
  p.correct = a[3];
  p.skipped_steps = a[4];
  p.sample = a[5];
  p.reference_batch = a[6];
  p.loss_sum = read_tensor(archive, "loss_sum").to(at::kCPU).item<double>();
  const std::string what = cat("checkpoint ", path);
  p.history = rows_from_text(epoch_fields(), read_text(archive, "history"), what);
  p.rank_history = rows_from_text(rank_epoch_fields(), read_text(archive, "rank_history"), what);
  p.segments = rows_from_text(segment_fields(), read_text(archive, "segments"), what);
  c10::IValue folder;
  if (archive.try_read("folder", folder) && folder.isString()) p.folder = folder.toStringRef();
  return p;
}

// This rank's generators, or for a rank the saving run did not have a stream of its own, distinct from
// every earlier segment's (the segment number is mixed into the seed).
void read_generators(torch::serialize::InputArchive& archive, const at::Device& device, int rank,
                     std::uint64_t seed, std::size_t segments) {
  GeneratorState state;
  if (!archive.try_read(cat("rng_cpu_rank", rank), state.cpu)) {
    seed_rank_streams(seed ^ (0x9e3779b97f4a7c15ull * (segments + 1)), rank);
    return;
  }
  archive.try_read(cat("rng_cuda_rank", rank), state.cuda);
  restore_generators(state, device);
}

void write_rank_state(torch::serialize::OutputArchive& archive, const std::vector<std::vector<at::Tensor>>& state) {
  const std::size_t count = state.empty() ? 0 : state.front().size();
  archive.write("rank_state", at::tensor({static_cast<std::int64_t>(count), static_cast<std::int64_t>(state.size())},
                                         at::kLong));
  for (std::size_t r = 0; r < state.size(); ++r)
    for (std::size_t i = 0; i < count; ++i)
      archive.write(cat("rank_state_", i, "_rank", r), state[r][i].detach().to(at::kCPU));
}

// This rank's own state: its saved tensors when the number of ranks is the saving run's, else the saved ranks' mean.
void read_rank_state(torch::serialize::InputArchive& archive, const std::string& path,
                     const std::vector<at::Tensor>& own, int rank, int ranks) {
  at::Tensor shape;
  const bool stored = archive.try_read("rank_state", shape);
  const std::int64_t count = stored ? shape[0].item<std::int64_t>() : 0;
  const std::int64_t saved = stored ? shape[1].item<std::int64_t>() : 0;
  FT_REQUIRE(count == static_cast<std::int64_t>(own.size()), "checkpoint ", path, " holds ", count,
             " per-rank state tensors but this run keeps ", own.size());
  at::NoGradGuard no_grad;
  for (std::size_t i = 0; i < own.size(); ++i) {
    if (saved == ranks) {
      own[i].copy_(read_tensor(archive, cat("rank_state_", i, "_rank", rank)));
      continue;
    }
    at::Tensor sum = at::zeros(own[i].sizes(), own[i].options().device(at::kCPU).dtype(at::kDouble));
    for (std::int64_t r = 0; r < saved; ++r)
      sum += read_tensor(archive, cat("rank_state_", i, "_rank", r)).to(at::kDouble);
    own[i].copy_(sum / static_cast<double>(std::max<std::int64_t>(1, saved)));
  }
}

torch::serialize::InputArchive open_archive(const std::string& path) {
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path, at::Device(at::kCPU));
  } catch (const c10::Error& e) {
    throw Error(cat("checkpoint ", path, " cannot be read (truncated or not a fusetrain checkpoint): ",
                    e.what_without_backtrace()));
  }
  return archive;
}

}  // namespace

void save_checkpoint(const std::string& path, const std::string& fingerprint, Network& network,
                     torch::optim::Optimizer& optimizer, const LossScaler& scaler, const TrainingPosition& p,
                     const at::Device& device, const std::vector<at::Tensor>& extra,
                     const std::vector<GeneratorState>& rank_generators,
                     const std::vector<std::vector<at::Tensor>>& rank_state) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive optimizer_archive;
  write_model_tensors(archive, network);
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("format", c10::IValue(kFormat));
  archive.write("fingerprint", c10::IValue(fingerprint));
  archive.write("position", at::tensor({static_cast<std::int64_t>(p.epoch), p.step, p.global_step, p.correct,
                                        p.skipped_steps, p.sample, p.reference_batch}, at::kLong));
  archive.write("loss_sum", at::tensor({p.loss_sum}, at::kDouble));
  archive.write("history", c10::IValue(rows_to_text(epoch_fields(), p.history)));
  archive.write("rank_history", c10::IValue(rows_to_text(rank_epoch_fields(), p.rank_history)));
  archive.write("segments", c10::IValue(rows_to_text(segment_fields(), p.segments)));
  archive.write("folder", c10::IValue(paths::absolute(paths::parent(path).empty() ? "." : paths::parent(path))));
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
  write_rank_state(archive, rank_state);
  write_checksummed_file(path, archive_bytes(archive, path, "checkpoint"));
}

// Everything is read onto the CPU first (a checkpoint of a GPU run resumes on a CPU host and the other
// way round), then copied or moved to where this run keeps it.
TrainingPosition load_checkpoint(const std::string& path, const std::string& fingerprint, Network& network,
                                 torch::optim::Optimizer& optimizer, LossScaler& scaler, const at::Device& device,
                                 const std::vector<at::Tensor>& extra, int rank, std::uint64_t seed,
                                 const std::vector<at::Tensor>& own, int ranks) {
  torch::serialize::InputArchive archive = open_archive(path);
  require_same_run(archive, path, fingerprint);
  read_model_tensors(archive, network, cat("checkpoint ", path));
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  optimizer.load(optimizer_archive);
  move_optimizer_state(optimizer, device);

  TrainingPosition p = read_position(archive, path);
  scaler.restore(read_tensor(archive, "scaler_scale"), read_tensor(archive, "scaler_growth"));
  const auto extra_count = read_tensor(archive, "extra_count").item<std::int64_t>();
  FT_REQUIRE(extra_count == static_cast<std::int64_t>(extra.size()), "checkpoint ", path, " holds ", extra_count,
             " extra state tensors but this run keeps ", extra.size());
  {
    at::NoGradGuard no_grad;
    for (std::size_t i = 0; i < extra.size(); ++i) extra[i].copy_(read_tensor(archive, cat("extra_", i)));
  }
  read_rank_state(archive, path, own, rank, ranks);
  read_generators(archive, device, rank, seed, p.segments.size());
  return p;
}

TrainingPosition read_checkpoint_position(const std::string& path, const std::string& fingerprint) {
  torch::serialize::InputArchive archive = open_archive(path);
  require_same_run(archive, path, fingerprint);
  return read_position(archive, path);
}

}  // namespace ft
