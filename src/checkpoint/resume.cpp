// Resume: the owner of the run's checkpoint files as the trainer sees them, so it asks only "where do I
// start" and "save here"; the file format lives in checkpoint.cpp, names and rotation in checkpoint_files.cpp.
#include "checkpoint/resume.h"

#include <cstdio>
#include <cstring>
#include <utility>

#include "io/checksummed_file.h"
#include "io/paths.h"
#include "runtime/error.h"
#include "runtime/world.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/finite_state.h"
#include "optim/rank_streams.h"

namespace ft {
namespace {

using Damaged = std::vector<std::pair<std::string, std::string>>;

void warn(const std::string& text) {
  std::printf("warning: %s\n", text.c_str());
  std::fflush(stdout);
}

// "a (why); b (why)"
std::string listed(const Damaged& damaged) {
  std::string text;
  for (const auto& [path, problem] : damaged) text += cat(text.empty() ? "" : "; ", path, " (", problem, ")");
  return text;
}

void move_aside(const Damaged& damaged) {
  for (const auto& item : damaged) {
    paths::rename(item.first, damaged_name(item.first));
    warn(cat("damaged checkpoint ", item.first, " moved aside to ", damaged_name(item.first)));
  }
}

// Rank 0: every file is damaged. An error naming them all (they stay), or with the policy's consent a
// warning, the files moved aside and a fresh start.
void give_up_on(const Damaged& damaged, bool discard) {
  FT_REQUIRE(discard, "no checkpoint of this run can be used, every one is damaged: ", listed(damaged),
             ". They are left in place: restore one, or run again with --discard-damaged-checkpoints to move them "
             "aside and start the run afresh");
  warn(cat("no checkpoint of this run can be used, every one is damaged: ", listed(damaged),
           ". --discard-damaged-checkpoints: they are moved aside (each renamed to <name>.damaged) and the run "
           "starts afresh"));
  move_aside(damaged);
}

// Rank 0: the newest file that verifies, or none; the damaged newer ones are reported and kept in the
// source for Resume::start() to move aside once the chosen one has loaded.
ResumeSource choose_on_rank0(const std::string& base, const CheckpointPolicy& policy) {
  CheckpointChoice choice = choose_checkpoint(newest_first(base, find_checkpoints(base)), file_checksum_problem);
  if (choice.chosen.empty()) {
    if (!choice.damaged.empty()) give_up_on(choice.damaged, policy.discard_damaged);
    return {};
  }
  for (const auto& [path, problem] : choice.damaged)
    warn(cat("checkpoint ", path, " is damaged (", problem, "): resuming from the previous one ", choice.chosen,
             " (once it has loaded, the damaged file is moved aside to ", damaged_name(path), ")"));
  return {choice.chosen, std::move(choice.damaged)};
}

// A run folder copied or moved (another disk, another mount point) resumes: say where it was written.
void note_moved_folder(const std::string& written_in, const std::string& path) {
  const std::string now = paths::absolute(paths::parent(path).empty() ? "." : paths::parent(path));
  if (written_in.empty() || written_in == now) return;
  std::printf("note: checkpoint %s was written in %s; the run folder has moved to %s and the run continues there\n",
              path.c_str(), written_in.c_str(), now.c_str());
  std::fflush(stdout);
}

// Every rank's own state tensors, in rank order, on every rank (collective): the tensors travel as their bytes,
// and every rank's have the shapes and dtypes of this rank's.
std::vector<std::vector<at::Tensor>> gather_rank_state(const World& world, const std::vector<at::Tensor>& own) {
  if (own.empty()) return {};
  std::string mine;
  std::vector<at::Tensor> host;
  for (const at::Tensor& t : own) {
    host.push_back(t.detach().to(at::kCPU).contiguous());
    mine.append(static_cast<const char*>(host.back().data_ptr()), host.back().nbytes());
  }
  std::vector<std::vector<at::Tensor>> out;
  for (const std::string& bytes : world.allgather(mine)) {
    FT_CHECK(bytes.size() == mine.size(), "per-rank state of another size on another rank");
    std::vector<at::Tensor> theirs;
    std::size_t offset = 0;
    for (const at::Tensor& t : host) {
      theirs.push_back(at::empty_like(t));
      std::memcpy(theirs.back().data_ptr(), bytes.data() + offset, t.nbytes());
      offset += t.nbytes();
    }
    out.push_back(std::move(theirs));
  }
  return out;
}

}  // namespace

ResumeSource choose_resume_source(const std::string& base, const World& world, const CheckpointPolicy& policy) {
  if (base.empty()) return {};
  ResumeSource source;
  // Every rank takes rank 0's decision: the same error, or the same file.
  world.decide_on_rank0([&] { source = choose_on_rank0(base, policy); });
  source.path = world.broadcast(source.path);
  return source;
}

std::optional<TrainingPosition> saved_position(const std::string& path, const std::string& fingerprint,
                                               const World& world) {
  if (path.empty()) return std::nullopt;
  // Rank 0 reads first: a checkpoint of another config is one message from rank 0, not one per rank.
  std::optional<TrainingPosition> position;
  world.decide_on_rank0([&] { position = read_checkpoint_position(path, fingerprint); });
  if (world.rank() != 0) position = read_checkpoint_position(path, fingerprint);
  return position;
}

Resume::Resume(std::string path, std::string fingerprint, const World& world, CheckpointedState state,
               CheckpointPolicy policy, ResumeSource source)
    : path_(std::move(path)), fingerprint_(std::move(fingerprint)), world_(world), state_(std::move(state)),
      policy_(policy), source_(std::move(source)) {}

TrainingPosition Resume::start() {
  since_save_.reset();
  if (path_.empty() || source_.path.empty()) return {};
  const TrainingPosition position = load_checkpoint(source_.path, fingerprint_, state_.network, state_.optimizer,
                                                    state_.scaler, state_.device, state_.extra, world_.rank(),
                                                    state_.seed, state_.rank_state, world_.size());
  if (world_.rank() == 0) {
    move_aside(source_.damaged);  // out of the rotation, which would otherwise keep them in place of good files
    note_moved_folder(position.folder, source_.path);
    std::printf("resuming from %s at epoch %d, step %lld\n", source_.path.c_str(), position.epoch,
                static_cast<long long>(position.step));
    const int saved = position.segments.empty() ? world_.size() : position.segments.back().world_size;
    if (!state_.rank_state.empty() && saved != world_.size())
      std::printf("per-rank state (PowerSGD's error feedback) of %d ranks: each of the %d ranks starts from their "
                  "mean, which keeps the error carried over all ranks\n", saved, world_.size());
    std::fflush(stdout);
  }
  return position;
}

void Resume::save(const TrainingPosition& position) {
  if (path_.empty()) return;
  if (state_.before_save) state_.before_save();
  require_finite_state(saved_state(state_.network, &state_.optimizer, state_.extra), world_,
                       cat("checkpoint ", path_));
  const std::vector<GeneratorState> generators = gather_generators(world_, state_.device);
  const auto rank_state = gather_rank_state(world_, state_.rank_state);
  if (world_.rank() == 0) {
    save_checkpoint(next_checkpoint_name(path_), fingerprint_, state_.network, state_.optimizer, state_.scaler,
                    position, state_.device, state_.extra, generators, rank_state);
    rotate_in_next(path_, policy_.keep);
  }
  since_save_.reset();
}

}  // namespace ft
