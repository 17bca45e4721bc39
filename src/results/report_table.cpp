// Table rendering for `fusetrain report`. Sorting compares numerically when both cells start with a
// number, so batch sizes 16, 32, 128 sort as numbers and names sort as text.
#include "results/report_table.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>

#include "config/loader.h"
#include "config/options.h"
#include "results/table_render.h"
#include "runtime/error.h"

namespace ft {

std::string config_value(const RunRecord& run, const std::string& key) {
  YAML::Node node = YAML::Load(run.config_yaml);
  std::stringstream in(key);
  for (std::string part; std::getline(in, part, '.');) {
    if (!node.IsMap() || !node[part]) return "";
    node = node[part];
  }
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

long long global_batch(const RunRecord& run) {
  double accumulation = 1;
  if (!leading_number(config_value(run, "train.accumulation_steps"), accumulation)) accumulation = 1;
  return static_cast<long long>(run.batch_size) * run.provenance.world_size * static_cast<long long>(accumulation);
}

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

const std::vector<std::string>& base_header() {
  static const std::vector<std::string> header = {
      "run", "model", "dataset", "ranks", "backend", "batch", "precision", "epochs", "wall_s", "train_s",
      "img_per_s", "forward_s", "backward_s", "comm_wait_s", "peak_MiB", "device", "gpu_util_%", "train_acc_%",
      "final_acc_%", "best_acc_%", "overfit"};
  return header;
}

// "32", or "32 (global 128)" when ranks or accumulation make a step see more images.
std::string batch_text(long long per_rank, long long global) {
  return global == per_rank ? std::to_string(per_rank) : cat(per_rank, " (global ", global, ")");
}

// The batch the run trained with; a run resumed with another batch split lists each segment's in order:
// "32 (global 64) -> 16 (global 64)".
std::string batch_text(const RunRecord& r) {
  if (r.segments.empty()) return batch_text(r.batch_size, global_batch(r));
  std::string text, last;
  for (const auto& s : r.segments) {
    const std::string here = batch_text(s.per_rank_batch, s.global_batch);
    if (here != last) text += (text.empty() ? "" : " -> ") + here;
    last = here;
  }
  return text;
}

// Mean over ranks of one phase's seconds.
double mean_phase(const RunRecord& r, std::size_t phase) {
  double sum = 0;
  for (const auto& rank : r.ranks) sum += rank.phase_s[phase];
  return r.ranks.empty() ? 0 : sum / static_cast<double>(r.ranks.size());
}

// The ranks' device models, each once ("-" when none were recorded).
std::string devices(const RunRecord& r) {
  std::vector<std::string> names;
  for (const auto& rank : r.ranks)
    if (std::find(names.begin(), names.end(), rank.device) == names.end()) names.push_back(rank.device);
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : " + ") + name;
  return text.empty() ? "-" : text;
}

std::string mean_gpu_utilization(const RunRecord& r) {
  if (r.utilization.empty()) return "-";
  double sum = 0;
  for (const auto& u : r.utilization) sum += u.gpu_percent;
  return fixed(sum / static_cast<double>(r.utilization.size()), 1);
}

// train_s: the epochs' training time alone (each epoch clock stops before its evaluation).
std::vector<std::string> row_of(const RunRecord& r, const std::vector<std::string>& extra_keys) {
  const auto& s = r.summary;
  double train_s = 0;
  for (const auto& e : r.epochs) train_s += e.epoch_time_s;
  const double train_acc = r.epochs.empty() ? 0 : r.epochs.back().train_acc;
  std::vector<std::string> row = {
      r.name, r.model, r.dataset, std::to_string(r.provenance.world_size), r.provenance.backend, batch_text(r),
      r.precision, std::to_string(s.epochs_run), fixed(s.wall_time_s, 1), fixed(train_s, 2),
      fixed(s.images_per_s, 0), fixed(mean_phase(r, 1), 2), fixed(mean_phase(r, 2), 2), fixed(mean_phase(r, 3), 2),
      fixed(s.peak_memory_bytes / 1048576.0, 1), devices(r), mean_gpu_utilization(r), fixed(100 * train_acc, 2),
      fixed(100 * s.final_test_acc, 2), fixed(100 * s.best_test_acc, 2),
      s.overfit ? cat("from epoch ", s.overfit_epoch) : "no"};
  for (const auto& key : extra_keys) row.push_back(config_value(r, key));
  return row;
}

// A table column's value, or else the config key's value, for sorting and grouping.
std::string column_value(const RunRecord& r, const std::string& key) {
  const auto& header = base_header();
  const auto it = std::find(header.begin(), header.end(), key);
  if (it == header.end()) return config_value(r, key);
  return row_of(r, {})[static_cast<std::size_t>(it - header.begin())];
}

// Throws, naming `option` and the nearest valid name, unless `key` is a column or a config key.
void require_known(const std::string& option, const std::string& key) {
  std::vector<std::string> names = base_header();
  Config defaults;
  for (const auto& o : option_table(defaults)) names.push_back(o.key);
  if (std::find(names.begin(), names.end(), key) != names.end()) return;
  std::string nearest = names.front();
  for (const auto& n : names)
    if (edit_distance(key, n) < edit_distance(key, nearest)) nearest = n;
  throw Error(cat(option, " '", key, "' is neither a column of the report nor a config key (did you mean '",
                  nearest, "'?); the columns: ", joined(base_header())));
}

std::vector<RunRecord> sorted_by(std::vector<RunRecord> runs, const std::string& key) {
  if (key.empty()) return runs;
  std::stable_sort(runs.begin(), runs.end(), [&](const RunRecord& a, const RunRecord& b) {
    const auto x = column_value(a, key), y = column_value(b, key);
    double u, v;
    if (leading_number(x, u) && leading_number(y, v)) return u < v;
    return x < y;
  });
  return runs;
}

}  // namespace

std::string report_table(const std::vector<RunRecord>& runs, const ReportOptions& options) {
  if (!options.sort_by.empty()) require_known("--sort", options.sort_by);
  if (!options.group_by.empty()) require_known("--group", options.group_by);
  for (const auto& key : options.extra_keys) require_known("--key", key);
  auto header = base_header();
  for (const auto& key : options.extra_keys) header.push_back(key);
  const auto ordered = sorted_by(runs, options.sort_by);
  std::string out;
  if (options.group_by.empty()) {
    std::vector<TableRow> rows;
    for (const auto& r : ordered) rows.push_back(row_of(r, options.extra_keys));
    render_table(out, header, rows, options.csv);
    return out;
  }
  // One table per group value (in order of first appearance); CSV gets a leading group column.
  std::vector<std::string> values;
  for (const auto& r : ordered) {
    const auto v = column_value(r, options.group_by);
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  }
  auto csv_header = header;
  csv_header.insert(csv_header.begin(), options.group_by);
  for (std::size_t g = 0; g < values.size(); ++g) {
    std::vector<TableRow> rows;
    for (const auto& r : ordered) {
      if (column_value(r, options.group_by) != values[g]) continue;
      rows.push_back(row_of(r, options.extra_keys));
      if (options.csv) rows.back().insert(rows.back().begin(), values[g]);
    }
    if (options.csv) {
      render_table(out, csv_header, rows, true, g == 0);
    } else {
      out += cat("### ", options.group_by, " = ", values[g], "\n\n");
      render_table(out, header, rows, false);
      out += "\n";
    }
  }
  return out;
}

}  // namespace ft
