// Table rendering for `fusetrain report`. Sorting compares numerically when both cells are numbers,
// so batch sizes 16, 32, 128 sort as numbers and names sort as text.
#include "results/report_table.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "runtime/error.h"

namespace ft {
namespace {

std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", digits, v);
  return text;
}

bool numeric(const std::string& s, double& value) {
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  return !s.empty() && end && *end == '\0';
}

}  // namespace

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

namespace {

const std::vector<std::string>& base_header() {
  static const std::vector<std::string> header = {"run", "model", "dataset", "ranks", "backend", "batch", "precision",
                                                  "epochs", "wall_s", "train_s", "img_per_s", "peak_MiB",
                                                  "final_acc_%", "best_acc_%", "overfit"};
  return header;
}

// train_s: the epochs' training time alone (each epoch clock stops before its evaluation).
std::vector<std::string> row_of(const RunRecord& r, const std::vector<std::string>& extra_keys) {
  const auto& s = r.summary;
  double train_s = 0;
  for (const auto& e : r.epochs) train_s += e.epoch_time_s;
  std::vector<std::string> row = {
      r.name, r.model, r.dataset, std::to_string(r.provenance.world_size), r.provenance.backend,
      std::to_string(r.batch_size), r.precision, std::to_string(s.epochs_run), fixed(s.wall_time_s, 1),
      fixed(train_s, 2), fixed(s.images_per_s, 0), fixed(s.peak_memory_bytes / 1048576.0, 1), fixed(100 * s.final_test_acc, 2),
      fixed(100 * s.best_test_acc, 2), s.overfit ? cat("from epoch ", s.overfit_epoch) : "no"};
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

std::vector<RunRecord> sorted_by(std::vector<RunRecord> runs, const std::string& key) {
  if (key.empty()) return runs;
  std::stable_sort(runs.begin(), runs.end(), [&](const RunRecord& a, const RunRecord& b) {
    const auto x = column_value(a, key), y = column_value(b, key);
    double u, v;
    if (numeric(x, u) && numeric(y, v)) return u < v;
    return x < y;
  });
  return runs;
}

void render(std::ostringstream& out, const std::vector<std::string>& header,
            const std::vector<std::vector<std::string>>& rows, bool csv, bool with_header) {
  if (csv) {
    auto line = [&](const std::vector<std::string>& cells) {
      for (std::size_t i = 0; i < cells.size(); ++i) {
        std::string cell = cells[i];
        if (cell.find_first_of(",\"") != std::string::npos) {
          std::string escaped;
          for (char ch : cell) escaped += ch == '"' ? std::string("\"\"") : std::string(1, ch);
          cell = "\"" + escaped + "\"";
        }
        out << (i ? "," : "") << cell;
      }
      out << "\n";
    };
    if (with_header) line(header);
    for (const auto& row : rows) line(row);
    return;
  }
  auto line = [&](const std::vector<std::string>& cells) {
    out << "|";
    for (const auto& cell : cells) out << " " << cell << " |";
    out << "\n";
  };
  line(header);
  out << "|";
  for (std::size_t i = 0; i < header.size(); ++i) out << "---|";
  out << "\n";
  for (const auto& row : rows) line(row);
}

}  // namespace

std::string report_table(const std::vector<RunRecord>& runs, const ReportOptions& options) {
  auto header = base_header();
  for (const auto& key : options.extra_keys) header.push_back(key);
  const auto ordered = sorted_by(runs, options.sort_by);
  std::ostringstream out;
  if (options.group_by.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : ordered) rows.push_back(row_of(r, options.extra_keys));
    render(out, header, rows, options.csv, true);
    return out.str();
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
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : ordered) {
      if (column_value(r, options.group_by) != values[g]) continue;
      rows.push_back(row_of(r, options.extra_keys));
      if (options.csv) rows.back().insert(rows.back().begin(), values[g]);
    }
    if (options.csv) {
      render(out, csv_header, rows, true, g == 0);
    } else {
      out << "### " << options.group_by << " = " << values[g] << "\n\n";
      render(out, header, rows, false, true);
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace ft
