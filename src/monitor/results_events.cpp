// A results file's epochs, per-rank figures, memory and config as a TensorBoard event file, on the step
// axis of a live run (optimizer steps) and with wall times from the run's start and epoch times.
#include "monitor/results_events.h"

#include <ctime>

#include "io/paths.h"
#include "monitor/epoch_scalars.h"
#include "monitor/event_file.h"
#include "runtime/error.h"

namespace ft {
namespace {

// "2026-11-26T06:33:07Z" as seconds since the Unix epoch; now when it does not parse.
double utc_seconds(const std::string& iso) {
  std::tm tm{};
  const char* end = strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return end != nullptr && *end == '\0' ? static_cast<double>(timegm(&tm)) : wall_seconds();
}

// Optimizer steps per epoch, so that epoch e lands where a live run logged it (e x steps); 1 (the epoch
// number as the step) for files that do not say.
std::int64_t steps_per_epoch(const RunRecord& run) {
  const auto& s = run.summary;
  return s.epochs_run > 0 && s.optimizer_steps >= s.epochs_run ? s.optimizer_steps / s.epochs_run : 1;
}

std::vector<Scalar> first_rank_memory(const RunRecord& run) {
  if (run.ranks.empty()) return {};
  const RankRecord& first = run.ranks.front();
  return memory_scalars(static_cast<double>(first.peak_memory_bytes), static_cast<double>(first.peak_allocated_bytes));
}

}  // namespace

void check_events_folder(const std::string& folder, bool force) {
  const auto earlier = event_files_in(folder);
  FT_REQUIRE(force || earlier.empty(), "TensorBoard folder ", folder, " already holds event files (",
             paths::filename(earlier.empty() ? folder : earlier.front()),
             "): TensorBoard would draw them and the new ones as one run; --force replaces them");
}

std::string write_run_events(const RunRecord& run, const std::string& folder) {
  for (const auto& file : event_files_in(folder)) paths::remove(file);
  double wall = utc_seconds(run.provenance.started_at);
  EventFile file(folder, wall);
  file.write(text_event(wall, 0, "config", "```yaml\n" + run.config_yaml + "```\n"));
  const std::int64_t steps = steps_per_epoch(run);
  for (std::size_t i = 0; i < run.epochs.size(); ++i) {
    const EpochRecord& e = run.epochs[i];
    wall += e.epoch_time_s;
    auto values = epoch_scalars(e);
    for (auto& v : rank_scalars(run.rank_epochs, e.epoch)) values.push_back(std::move(v));
    if (i + 1 == run.epochs.size())
      for (auto& v : first_rank_memory(run)) values.push_back(std::move(v));
    file.write(scalars_event(wall, e.epoch * steps, values));
  }
  file.flush();
  return file.path();
}

}  // namespace ft
