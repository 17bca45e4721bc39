// The predictions as a table for the terminal (markdown) or a spreadsheet (CSV): one row per topology and
// all-reduce, times in milliseconds, efficiency in percent.
#pragma once

#include <string>
#include <vector>

#include "plan/prediction.h"

namespace ft {

std::string plan_table(const std::vector<PlanRow>& rows, bool csv);

}  // namespace ft
