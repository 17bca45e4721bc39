// Tests of plan/plan_table.cpp: a row's seconds printed as milliseconds and its efficiency as a percentage, each
// under its header, in the markdown and the CSV forms.
#include "plan/plan_table.h"

#include <gtest/gtest.h>

#include <string>

namespace ft {
namespace {

PlanRow sample_row() {
  PlanRow r{{4, 2}, parse_variant("flat+bf16"), 2};
  r.step_s = 0.25, r.compute_s = 0.2, r.comm_s = 0.075, r.exposed_s = 0.03125, r.comm_cpu_s = 0.0123;
  r.images_per_s = 1024.44, r.efficiency = 0.875;
  return r;
}

TEST(PlanTable, CsvRowsInMillisecondsAndPercent) {
  EXPECT_EQ(plan_table({sample_row()}, true),
            "nodes x ranks,devices,allreduce,step_ms,compute_ms,allreduce_ms,exposed_ms,images_per_s,efficiency_pct,"
            "comm_cpu_ms\n4 x 2,8,flat+bf16,250.00,200.00,75.00,31.25,1024.4,87.5,12.30\n");
}

TEST(PlanTable, MarkdownHasTheSameCells) {
  const std::string table = plan_table({sample_row()}, false);
  EXPECT_NE(table.find("| nodes x ranks | devices | allreduce | step_ms | compute_ms | allreduce_ms | exposed_ms | "
                       "images_per_s | efficiency_pct | comm_cpu_ms |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| 4 x 2 | 8 | flat+bf16 | 250.00 | 200.00 | 75.00 | 31.25 | 1024.4 | 87.5 | 12.30 |"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace ft
