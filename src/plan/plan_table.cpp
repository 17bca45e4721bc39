// The rows of plan_table.h through the report tables' renderer, so that the terminal and `fusetrain report`
// print tables alike.
#include "plan/plan_table.h"

#include "results/table_render.h"

namespace ft {

std::string plan_table(const std::vector<PlanRow>& rows, bool csv) {
  const TableRow header{"nodes x ranks", "devices", "allreduce", "step_ms", "compute_ms", "allreduce_ms",
                        "exposed_ms", "images_per_s", "efficiency_pct", "comm_cpu_ms"};
  std::vector<TableRow> cells;
  for (const PlanRow& r : rows)
    cells.push_back({r.topology.name(), std::to_string(r.topology.ranks()), r.variant.name(), fixed(1e3 * r.step_s, 2),
                     fixed(1e3 * r.compute_s, 2), fixed(1e3 * r.comm_s, 2), fixed(1e3 * r.exposed_s, 2),
                     fixed(r.images_per_s, 1), fixed(100 * r.efficiency, 1), fixed(1e3 * r.comm_cpu_s, 2)});
  std::string out;
  render_table(out, header, cells, csv);
  return out;
}

}  // namespace ft
