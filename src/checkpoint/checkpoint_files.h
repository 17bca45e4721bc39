// The set of a run's checkpoint files: their names, which exist, the renames that put a new one in as
// the newest while keeping the last K, the choice of the newest that verifies, and their removal.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ft {

// `base` is the newest checkpoint's path (runs/case.ckpt); older ones are base.1, base.2, ... by age.
// base.next is a new checkpoint, complete and verified, that a save had not yet renamed into place when it
// was interrupted: newer than every other. A damaged file moved aside is named <its name>.damaged.
std::string checkpoint_name(const std::string& base, int age);
std::string next_checkpoint_name(const std::string& base);
std::string damaged_name(const std::string& path);

// The checkpoint files of `base` on disk: whether base.next exists and the ages present, ascending.
struct CheckpointFiles {
  bool next = false;
  std::vector<int> ages;
};
CheckpointFiles find_checkpoints(const std::string& base);
// Their paths, newest first: base.next, base, base.1, ...
std::vector<std::string> newest_first(const std::string& base, const CheckpointFiles& files);

struct Rename {
  std::string from, to;
};
struct RotationPlan {
  std::vector<Rename> renames;        // in this order; each is one atomic rename(2)
  std::vector<std::string> removals;  // afterwards: files older than the `keep` newest
};
// Puts base.next in as base, keeping the `keep` (>= 1) newest files under ages 0 .. keep-1. The files older
// than the first missing age close up into free ages; those younger move up by one, youngest last (the
// oldest kept file is replaced when no age is missing); then base.next becomes base, and files beyond
// the kept window are removed. A kill between any two steps leaves at least as many complete checkpoints as
// before, still in age order (base.next counting as the newest).
RotationPlan plan_rotation(const std::string& base, const std::vector<int>& ages, int keep);
// Carries out plan_rotation for the files on disk.
void rotate_in_next(const std::string& base, int keep);

// The newest candidate (paths newest first) for which `problem_of` returns "", and the problems of the newer
// ones; `chosen` is "" when none verifies, and `damaged` then lists every candidate.
struct CheckpointChoice {
  std::string chosen;
  std::vector<std::pair<std::string, std::string>> damaged;  // path, what is wrong
};
CheckpointChoice choose_checkpoint(const std::vector<std::string>& newest_first,
                                   const std::function<std::string(const std::string&)>& problem_of);

// Removes base.next, base, base.1, ... (not the files moved aside as damaged); the end of a finished run.
void remove_checkpoints(const std::string& base);
// Removes the temporaries that dead processes left while writing any of the run's checkpoint names.
void remove_stale_checkpoint_temporaries(const std::string& base, int keep);

}  // namespace ft
