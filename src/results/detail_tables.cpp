// Per-rank rows, segments and the model summary for `fusetrain report --per-rank`, `--segments` and
// `--model` (the latter also printed by `fusetrain train` at start).
#include "results/detail_tables.h"

#include "config/number_text.h"
#include "results/table_render.h"

namespace ft {

std::string per_rank_table(const std::vector<RunRecord>& runs, bool csv) {
  const TableRow header = {"run", "rank", "host", "device", "train_images", "data_s", "forward_s", "backward_s",
                           "comm_wait_s", "optimizer_s", "eval_s", "peak_MiB", "train_loss", "train_acc_%",
                           "test_loss", "test_acc_%"};
  std::vector<TableRow> rows;
  for (const auto& run : runs) {
    for (std::size_t i = 0; i < run.ranks.size(); ++i) {
      const auto& r = run.ranks[i];
      TableRow row = {run.name, std::to_string(i), r.hostname, r.device, std::to_string(r.train_images)};
      for (double seconds : r.phase_s) row.push_back(fixed(seconds, 2));
      row.push_back(fixed(r.peak_memory_bytes / 1048576.0, 1));
      row.push_back(fixed(r.train_loss, 4));
      row.push_back(fixed(100 * r.train_acc, 2));
      row.push_back(fixed(r.test_loss, 4));  // on the rank's own slice of the test split
      row.push_back(fixed(100 * r.test_acc, 2));
      rows.push_back(row);
    }
  }
  std::string out;
  render_table(out, header, rows, csv);
  return out;
}

std::string segment_table(const std::vector<RunRecord>& runs, bool csv) {
  const TableRow header = {"run", "segment", "ranks", "nodes", "backend", "device", "started_at", "start_epoch",
                           "start_step", "batch_per_rank", "accumulation", "global_batch", "lr_factor", "wall_s"};
  std::vector<TableRow> rows;
  for (const auto& run : runs) {
    for (const auto& s : run.segments)
      rows.push_back({run.name, std::to_string(s.segment), std::to_string(s.world_size), std::to_string(s.node_count),
                      s.backend, s.device, s.started_at, std::to_string(s.start_epoch), std::to_string(s.start_step),
                      std::to_string(s.per_rank_batch), std::to_string(s.accumulation), std::to_string(s.global_batch),
                      shortest_number(s.lr_factor), fixed(s.wall_time_s, 1)});
  }
  std::string out;
  render_table(out, header, rows, csv);
  return out;
}

long long total_parameters(const std::vector<ModelLayer>& layers) {
  long long total = 0;
  for (const auto& layer : layers) total += layer.parameters;
  return total;
}

namespace {

std::vector<TableRow> model_rows(const std::vector<ModelLayer>& layers) {
  std::vector<TableRow> rows;
  for (const auto& layer : layers) rows.push_back({layer.name, layer.output_shape, std::to_string(layer.parameters)});
  rows.push_back({"total", "", std::to_string(total_parameters(layers))});
  return rows;
}

}  // namespace

std::string model_table(const std::vector<ModelLayer>& layers) {
  std::string out;
  render_table(out, {"layer", "output", "parameters"}, model_rows(layers), false);
  return out;
}

std::string model_tables(const std::vector<RunRecord>& runs, bool csv) {
  std::string out;
  if (csv) {
    std::vector<TableRow> rows;
    for (const auto& run : runs)
      for (auto row : model_rows(run.layers)) {
        row.insert(row.begin(), run.name);
        rows.push_back(row);
      }
    render_table(out, {"run", "layer", "output", "parameters"}, rows, true);
    return out;
  }
  for (const auto& run : runs) {
    out += "### " + run.name + " (" + run.model + ")\n\n";
    out += run.layers.empty() ? std::string("no model summary recorded\n") : model_table(run.layers);
    out += "\n";
  }
  return out;
}

}  // namespace ft
