// Records of a declared field table as tab-separated text (a header of field names, then a line per
// record), so checkpoints carry the history, per-rank figures and segments by the same declarations.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "results/field_table.h"
#include "runtime/error.h"

namespace ft {

namespace field_text {
std::string format(const FieldRef& ref);             // doubles round-trip exactly; text escaped
void parse(const FieldRef& ref, const std::string& text, const std::string& what);
std::vector<std::vector<std::string>> split_lines(const std::string& text);  // unescaped cells
}  // namespace field_text

template <typename Record>
std::string rows_to_text(const FieldGroup<Record>& group, std::vector<Record> rows) {
  std::string out;
  for (const auto& f : group.fields) out += cat(out.empty() ? "" : "\t", f.name);
  for (auto& row : rows) {
    out += "\n";
    for (std::size_t i = 0; i < group.fields.size(); ++i)
      out += cat(i ? "\t" : "", field_text::format(group.fields[i].ref(row)));
  }
  return out;
}

// Fields are matched by name: a column the text lacks keeps the record's default, one the table no longer
// declares is ignored. `what` names the source for errors.
template <typename Record>
std::vector<Record> rows_from_text(const FieldGroup<Record>& group, const std::string& text, const std::string& what) {
  const auto lines = field_text::split_lines(text);
  std::vector<Record> out;
  if (lines.empty()) return out;
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < lines[0].size(); ++i) column[lines[0][i]] = i;
  for (std::size_t l = 1; l < lines.size(); ++l) {
    Record row{};
    for (const auto& f : group.fields) {
      const auto it = column.find(f.name);
      if (it == column.end()) continue;
      FT_REQUIRE(it->second < lines[l].size(), what, ": row ", l, " has no value for ", f.name);
      field_text::parse(f.ref(row), lines[l][it->second], cat(what, " ", f.name));
    }
    out.push_back(row);
  }
  return out;
}

}  // namespace ft
