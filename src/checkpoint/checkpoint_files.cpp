// Checkpoint file names and rotation: rename(2) within one folder is atomic, so the rotation is a list of
// renames in an order that never loses a complete checkpoint; the plan is computed apart from the disk.
#include "checkpoint/checkpoint_files.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "io/atomic_file.h"
#include "io/paths.h"
#include "runtime/error.h"

namespace ft {
namespace {

// The age a file name gives within `base`'s set: 0 for base itself, N for base.N; -1 for anything else.
int age_of(const std::string& name, const std::string& base_name) {
  if (name == base_name) return 0;
  if (name.size() <= base_name.size() + 1 || name.compare(0, base_name.size() + 1, base_name + ".") != 0) return -1;
  const std::string digits = name.substr(base_name.size() + 1);
  if (digits.size() > 6 || digits[0] == '0') return -1;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  return std::atoi(digits.c_str());
}

}  // namespace

std::string checkpoint_name(const std::string& base, int age) { return age == 0 ? base : cat(base, ".", age); }
std::string next_checkpoint_name(const std::string& base) { return base + ".next"; }
std::string damaged_name(const std::string& path) { return path + ".damaged"; }

CheckpointFiles find_checkpoints(const std::string& base) {
  const std::string dir = paths::parent(base).empty() ? "." : paths::parent(base);
  CheckpointFiles files;
  if (!paths::is_directory(dir)) return files;
  const std::string base_name = paths::filename(base);
  for (const std::string& name : paths::list_directory(dir)) {
    if (name == paths::filename(next_checkpoint_name(base))) files.next = true;
    const int age = age_of(name, base_name);
    if (age >= 0) files.ages.push_back(age);
  }
  std::sort(files.ages.begin(), files.ages.end());
  return files;
}

std::vector<std::string> newest_first(const std::string& base, const CheckpointFiles& files) {
  std::vector<std::string> out;
  if (files.next) out.push_back(next_checkpoint_name(base));
  for (int age : files.ages) out.push_back(checkpoint_name(base, age));
  return out;
}

RotationPlan plan_rotation(const std::string& base, const std::vector<int>& ages, int keep) {
  FT_CHECK(keep >= 1, "keep_checkpoints must be at least 1, got ", keep);
  auto present = [&](int age) { return std::find(ages.begin(), ages.end(), age) != ages.end(); };
  int gap = 0;  // the first age without a file; the oldest kept age when every one has a file
  while (gap < keep - 1 && present(gap)) ++gap;
  RotationPlan plan;
  // Beyond the gap, files close ranks into free ages, oldest last (youngest first), or fall out of the kept
  // window; the one at `gap` itself, when there is one, is replaced by the first shift below.
  int target = gap + 1;
  for (int age : ages) {
    if (age <= gap) continue;
    if (target >= keep) plan.removals.push_back(checkpoint_name(base, age));
    else if (age != target) plan.renames.push_back({checkpoint_name(base, age), checkpoint_name(base, target)});
    ++target;
  }
  for (int age = gap - 1; age >= 0; --age) plan.renames.push_back({checkpoint_name(base, age), checkpoint_name(base, age + 1)});
  plan.renames.push_back({next_checkpoint_name(base), base});
  return plan;
}

void rotate_in_next(const std::string& base, int keep) {
  const RotationPlan plan = plan_rotation(base, find_checkpoints(base).ages, keep);
  for (const Rename& step : plan.renames) paths::rename(step.from, step.to);
  for (const std::string& path : plan.removals) paths::remove(path);
}

CheckpointChoice choose_checkpoint(const std::vector<std::string>& newest_first,
                                   const std::function<std::string(const std::string&)>& problem_of) {
  CheckpointChoice choice;
  for (const std::string& path : newest_first) {
    std::string problem = problem_of(path);
    if (problem.empty()) {
      choice.chosen = path;
      break;
    }
    choice.damaged.emplace_back(path, std::move(problem));
  }
  return choice;
}

void remove_checkpoints(const std::string& base) {
  for (const std::string& path : newest_first(base, find_checkpoints(base))) paths::remove(path);
}

void remove_stale_checkpoint_temporaries(const std::string& base, int keep) {
  remove_stale_temporaries(next_checkpoint_name(base));
  for (int age = 0; age < keep; ++age) remove_stale_temporaries(checkpoint_name(base, age));
}

}  // namespace ft
