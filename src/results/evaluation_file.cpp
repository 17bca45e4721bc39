// Evaluation file writer and reader over the io/h5 layer: attributes and per-class columns through the
// field tables, the confusion matrix (and optional logits) as the array declarations name them.
#include "results/evaluation_file.h"

#include "io/atomic_file.h"
#include "io/h5.h"
#include "results/field_h5.h"
#include "results/results_fields.h"

namespace ft {
namespace {

constexpr const char* kFormat = "fusetrain-evaluation";

hsize_t count_of(std::size_t n) { return static_cast<hsize_t>(n); }

void write_arrays(hid_t group, const EvaluationRecord& r) {
  const ArrayGroup& arrays = evaluation_array_fields();
  const auto k = count_of(r.classes.size());
  FT_CHECK(r.confusion.size() == k * k, "confusion matrix of ", r.confusion.size(), " counts for ", k, " classes");
  h5::write(group, arrays.field("confusion").name, r.confusion.data(), {k, k});
  if (r.logits.empty()) return;
  const auto rows = count_of(r.labels.size());
  FT_CHECK(r.logits.size() == rows * k, r.logits.size(), " logits for ", rows, " labels of ", k, " classes");
  h5::write(group, arrays.field("logits").name, r.logits.data(), {rows, k});
  h5::write(group, arrays.field("labels").name, r.labels.data(), {rows});
}

void read_arrays(hid_t group, EvaluationRecord& r) {
  const ArrayGroup& arrays = evaluation_array_fields();
  const auto k = count_of(r.classes.size());
  const char* confusion = arrays.field("confusion").name;
  field_h5::located(arrays.path, confusion, [&] {
    const auto dims = h5::dims(group, confusion);
    FT_REQUIRE(dims == std::vector<hsize_t>({k, k}), "is not ", k, "x", k, " (one row and column per class)");
    r.confusion = h5::read_all<std::int64_t>(group, confusion);
  });
  const char* logits = arrays.field("logits").name;
  if (!h5::exists(group, logits)) return;
  field_h5::located(arrays.path, logits, [&] {
    r.logits = h5::read_all<float>(group, logits);
    r.labels = h5::read_all<std::int64_t>(group, arrays.field("labels").name);
    FT_REQUIRE(r.logits.size() == r.labels.size() * k, "holds ", r.logits.size(), " values, not ",
               r.labels.size(), " labels x ", k, " classes");
  });
}

}  // namespace

void write_evaluation(const std::string& path, const EvaluationRecord& r) {
  std::string image;
  {
    h5::Handle file = h5::create_memory_file(path);
    h5::set_attr(file, "format", kFormat);
    h5::set_attr(file, "format_version", kEvaluationFormatVersion);
    h5::Handle group = h5::create_group(file, evaluation_fields().path + 1);
    field_h5::write_attributes(group, evaluation_fields(), r.summary);
    field_h5::write_columns(group, evaluation_class_fields(), r.classes);
    write_arrays(group, r);
    group.close();
    image = h5::file_image(file);
    file.close();
  }
  write_file_atomically(path, image);
}

EvaluationRecord read_evaluation(const std::string& path) {
  EvaluationRecord r;
  try {
    h5::Handle file = h5::open_file(path);
    FT_REQUIRE(h5::has_attr(file, "format") && h5::attr_string(file, "format") == kFormat,
               "not a fusetrain evaluation file (no format=", kFormat, " attribute; written by fusetrain evaluate)");
    const auto version = h5::attr_int(file, "format_version");
    FT_REQUIRE(version == kEvaluationFormatVersion, "evaluation format_version ", version, " is not ",
               kEvaluationFormatVersion, " (written by another fusetrain version)");
    const char* group_path = evaluation_fields().path + 1;
    FT_REQUIRE(h5::exists(file, group_path), "missing group ", evaluation_fields().path);
    const h5::Handle group = h5::open_group(file, group_path);
    field_h5::read_attributes(group, evaluation_fields(), r.summary);
    r.classes = field_h5::read_columns(group, evaluation_class_fields());
    read_arrays(group, r);
  } catch (const Error& e) {
    throw Error(cat(path, ": ", e.what()));
  }
  return r;
}

}  // namespace ft
