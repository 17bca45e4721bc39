// Results file writer and reader over the io/h5 layer, both driven by the field tables of
// results_fields.cpp. Tables are stored column-wise (one dataset per column) so that h5py, h5dump and
// pandas read them without custom types.
#include "results/results_file.h"

#include "io/atomic_file.h"
#include "io/h5.h"
#include "results/field_h5.h"

namespace ft {
namespace {

template <typename Record>
void write_table(hid_t file, const FieldGroup<Record>& group, const std::vector<Record>& rows) {
  h5::Handle handle = h5::create_group(file, group.path + 1);
  field_h5::write_columns(handle, group, rows);
  handle.close();
}

template <typename Record>
std::vector<Record> read_table(hid_t file, const FieldGroup<Record>& group) {
  FT_REQUIRE(h5::exists(file, group.path + 1), "missing group ", group.path);
  h5::Handle handle = h5::open_group(file, group.path + 1);
  return field_h5::read_columns(handle, group);
}

}  // namespace

void write_results(const std::string& path, const RunRecord& r) {
  // Built in memory and written with checked system calls: a full disk is an error naming the path,
  // never a broken file (HDF5's own writer cannot report a failed flush reliably).
  std::string image;
  {
    h5::Handle file = h5::create_memory_file(path);
    h5::set_attr(file, "format", "fusetrain-results");
    h5::set_attr(file, "format_version", kResultsFormatVersion);
    field_h5::write_attributes(file, run_attribute_fields(), r);
    field_h5::write_text_datasets(file, run_text_fields(), r);
    {
      h5::Handle provenance = h5::create_group(file, "provenance");
      field_h5::write_attributes(provenance, provenance_fields(), r.provenance);
      provenance.close();
    }
    write_table(file, epoch_fields(), r.epochs);
    write_table(file, rank_fields(), r.ranks);
    write_table(file, rank_epoch_fields(), r.rank_epochs);
    write_table(file, segment_fields(), r.segments);
    write_table(file, utilization_fields(), r.utilization);
    write_table(file, model_fields(), r.layers);
    {
      h5::Handle summary = h5::create_group(file, "summary");
      field_h5::write_attributes(summary, summary_fields(), r.summary);
      summary.close();
    }
    image = h5::file_image(file);
    file.close();
  }
  write_file_atomically(path, image);
}

RunRecord read_results(const std::string& path) {
  RunRecord r;
  try {
    h5::Handle file = h5::open_file(path);
    FT_REQUIRE(h5::has_attr(file, "format") && h5::attr_string(file, "format") == "fusetrain-results",
               "not a fusetrain results file (no format=fusetrain-results attribute)");
    const auto version = h5::attr_int(file, "format_version");
    FT_REQUIRE(version == kResultsFormatVersion, "results format_version ", version, " is not ",
               kResultsFormatVersion, " (written by another fusetrain version)");
    field_h5::read_attributes(file, run_attribute_fields(), r);
    field_h5::read_text_datasets(file, run_text_fields(), r);
    FT_REQUIRE(h5::exists(file, "provenance"), "missing group /provenance");
    field_h5::read_attributes(h5::open_group(file, "provenance"), provenance_fields(), r.provenance);
    r.epochs = read_table(file, epoch_fields());
    r.ranks = read_table(file, rank_fields());
    r.rank_epochs = read_table(file, rank_epoch_fields());
    r.segments = read_table(file, segment_fields());
    r.utilization = read_table(file, utilization_fields());
    r.layers = read_table(file, model_fields());
    FT_REQUIRE(h5::exists(file, "summary"), "missing group /summary");
    field_h5::read_attributes(h5::open_group(file, "summary"), summary_fields(), r.summary);
  } catch (const Error& e) {
    throw Error(cat(path, ": ", e.what()));
  }
  return r;
}

}  // namespace ft
