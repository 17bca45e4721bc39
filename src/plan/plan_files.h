// The files of planning, JSON so that people and scripts read them: a step profile (`fusetrain plan profile`),
// a link description (`bench allreduce --sweep --fit`) and the predictions (`fusetrain plan --json`).
#pragma once

#include <string>
#include <vector>

#include "plan/link_fit.h"
#include "plan/prediction.h"

namespace ft {

// What one sweep measured of a level, beside its fitted alpha and beta.
struct LinkLevelRecord {
  std::string level;     // "intra" or "inter"
  LinkLevel fit;
  int ranks = 0, nodes = 0;
  std::string backend, measured_at;
  std::vector<SweepSample> samples;
  int beside_compute = 0;  // busy threads per rank the sweep ran beside (0: an idle machine)
};

struct LinkFile {
  LinkModel model;
  std::vector<LinkLevelRecord> levels;
};

std::string profile_json(const StepProfile& profile);
// Throws ft::Error naming the file and the key that is missing or malformed.
StepProfile read_profile(const std::string& path);

std::string link_json(const LinkFile& link);
LinkFile read_link(const std::string& path);
// `path` with `record` as its level (replacing an earlier sweep of the same level, keeping the other); the
// file's ring_min_bytes becomes `ring_min_bytes`. A file that is not a link file is an error, not replaced.
LinkFile merge_link_level(const std::string& path, const LinkLevelRecord& record, double ring_min_bytes);

// The predictions: what they were made from (profiles, link, placement) and one row per topology and all-reduce.
std::string plan_json(const PlanInputs& inputs, const std::vector<PlanRow>& rows);

}  // namespace ft
