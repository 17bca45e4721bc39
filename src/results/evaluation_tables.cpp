// Rendering of an evaluation's per-class table and confusion matrix through the report tables' renderer;
// class names are escaped so that a '|' in one cannot break a markdown row.
#include "results/evaluation_tables.h"

#include "results/table_render.h"
#include "runtime/error.h"

namespace ft {
namespace {

std::string cell_text(const std::string& text, bool csv) {
  if (csv) return text;
  std::string out;
  for (char ch : text) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

}  // namespace

std::string class_table(const EvaluationRecord& record, bool csv) {
  std::vector<TableRow> rows;
  for (std::size_t k = 0; k < record.classes.size(); ++k) {
    const auto& c = record.classes[k];
    rows.push_back({std::to_string(k), cell_text(c.name, csv), std::to_string(c.support), std::to_string(c.predicted),
                    fixed(100 * c.precision, 2), fixed(100 * c.recall, 2), fixed(100 * c.accuracy, 2)});
  }
  std::string out;
  render_table(out, {"k", "class", "images", "predicted", "precision_%", "recall_%", "accuracy_%"}, rows, csv);
  return out;
}

std::string confusion_table(const EvaluationRecord& record, bool csv) {
  const std::size_t k = record.classes.size();
  FT_CHECK(record.confusion.size() == k * k, "confusion matrix of ", record.confusion.size(), " counts for ", k,
           " classes");
  TableRow header = {"true \\ predicted"};
  for (const auto& c : record.classes) header.push_back(cell_text(c.name, csv));
  header.push_back("total");
  std::vector<TableRow> rows;
  for (std::size_t t = 0; t < k; ++t) {
    TableRow row = {cell_text(record.classes[t].name, csv)};
    std::int64_t total = 0;
    for (std::size_t p = 0; p < k; ++p) {
      row.push_back(std::to_string(record.confusion[t * k + p]));
      total += record.confusion[t * k + p];
    }
    row.push_back(std::to_string(total));
    rows.push_back(row);
  }
  std::string out;
  render_table(out, header, rows, csv);
  return out;
}

std::string summary_line(const EvaluationSummary& s) {
  return cat("evaluate: ", s.split, " accuracy ", fixed(100 * s.top1, 2), "% (top-", s.top_k, " ",
             fixed(100 * s.top5, 2), "%), loss ", fixed(s.loss, 4), " over ", s.images, " images");
}

}  // namespace ft
