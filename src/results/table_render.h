// Rendering of report tables: one header and rows of cells as a markdown table or as CSV (quoted
// where a cell holds a comma or a quote), and the number formats the tables share.
#pragma once

#include <string>
#include <vector>

namespace ft {

using TableRow = std::vector<std::string>;

// Appends the table to `out`; CSV without the header line when with_header is false.
void render_table(std::string& out, const TableRow& header, const std::vector<TableRow>& rows, bool csv,
                  bool with_header = true);

// `v` with `digits` decimals.
std::string fixed(double v, int digits);
// True when `cell` starts with a number followed by nothing or a space ("32", "32 (global 64)").
bool leading_number(const std::string& cell, double& value);

}  // namespace ft
