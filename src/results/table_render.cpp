// Markdown and CSV writers for the report tables.
#include "results/table_render.h"

#include <cstdio>
#include <cstdlib>

namespace ft {
namespace {

std::string csv_cell(const std::string& cell) {
  if (cell.find_first_of(",\"\n") == std::string::npos) return cell;
  std::string escaped = "\"";
  for (char ch : cell) escaped += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return escaped + "\"";
}

void line(std::string& out, const TableRow& cells, bool csv) {
  if (csv) {
    for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + csv_cell(cells[i]);
  } else {
    out += "|";
    for (const auto& cell : cells) out += " " + cell + " |";
  }
  out += "\n";
}

}  // namespace

void render_table(std::string& out, const TableRow& header, const std::vector<TableRow>& rows, bool csv,
                  bool with_header) {
  if (with_header || !csv) line(out, header, csv);
  if (!csv) {
    out += "|";
    for (std::size_t i = 0; i < header.size(); ++i) out += "---|";
    out += "\n";
  }
  for (const auto& row : rows) line(out, row, csv);
}

std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", digits, v);
  return text;
}

bool leading_number(const std::string& cell, double& value) {
  char* end = nullptr;
  value = std::strtod(cell.c_str(), &end);
  return !cell.empty() && end != cell.c_str() && (*end == '\0' || *end == ' ');
}

}  // namespace ft
