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

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

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

std::string report_table(const std::vector<RunRecord>& runs, const ReportOptions& options) {
  Table t;
  t.header = {"run", "model", "dataset", "ranks", "backend", "batch", "precision", "epochs", "wall_s",
              "img_per_s", "peak_MiB", "final_acc_%", "best_acc_%", "overfit"};
  for (const auto& key : options.extra_keys) t.header.push_back(key);
  for (const auto& r : runs) {
    const auto& s = r.summary;
    std::vector<std::string> row = {
        r.name, r.model, r.dataset, std::to_string(r.provenance.world_size), r.provenance.backend,
        std::to_string(r.batch_size), r.precision, std::to_string(s.epochs_run), fixed(s.wall_time_s, 1),
        fixed(s.images_per_s, 0), fixed(s.peak_memory_bytes / 1048576.0, 1), fixed(100 * s.final_test_acc, 2),
        fixed(100 * s.best_test_acc, 2), s.overfit ? cat("from epoch ", s.overfit_epoch) : "no"};
    for (const auto& key : options.extra_keys) row.push_back(config_value(r, key));
    t.rows.push_back(row);
  }
  if (!options.sort_by.empty()) {
    const auto it = std::find(t.header.begin(), t.header.end(), options.sort_by);
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < runs.size(); ++i)
      keys.push_back(it != t.header.end() ? t.rows[i][static_cast<std::size_t>(it - t.header.begin())]
                                          : config_value(runs[i], options.sort_by));
    std::vector<std::size_t> order(runs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      double x, y;
      if (numeric(keys[a], x) && numeric(keys[b], y)) return x < y;
      return keys[a] < keys[b];
    });
    Table sorted{t.header, {}};
    for (auto i : order) sorted.rows.push_back(t.rows[i]);
    t = sorted;
  }
  std::ostringstream out;
  if (options.csv) {
    auto line = [&](const std::vector<std::string>& cells) {
      for (std::size_t i = 0; i < cells.size(); ++i) {
        const bool quote = cells[i].find_first_of(",\"") != std::string::npos;
        std::string cell = cells[i];
        if (quote) {
          std::string escaped;
          for (char ch : cell) escaped += ch == '"' ? std::string("\"\"") : std::string(1, ch);
          cell = "\"" + escaped + "\"";
        }
        out << (i ? "," : "") << cell;
      }
      out << "\n";
    };
    line(t.header);
    for (const auto& row : t.rows) line(row);
  } else {
    auto line = [&](const std::vector<std::string>& cells) {
      out << "|";
      for (const auto& cell : cells) out << " " << cell << " |";
      out << "\n";
    };
    line(t.header);
    out << "|";
    for (std::size_t i = 0; i < t.header.size(); ++i) out << "---|";
    out << "\n";
    for (const auto& row : t.rows) line(row);
  }
  return out.str();
}

}  // namespace ft
