// Orchestration of one conversion: dispatch to the reader for the format, apply --resize and
// --grayscale, hash the files that were read, and hand the result to the shard writer.
#include "data_prep/prep_pipeline.h"

#include <chrono>
#include <regex>

#include "data_prep/checksum.h"
#include "data_prep/idx_reader.h"
#include "data_prep/image_folder_reader.h"
#include "data_prep/shard_writer.h"
#include "data_prep/stl10_reader.h"
#include "data_prep/transforms.h"
#include "io/paths.h"
#include "runtime/error.h"

namespace ft::prep {
namespace {

RawDataset read_dataset(const PrepOptions& options, const std::string& dataset) {
  switch (options.format) {
    case Format::cifar10:
      return read_cifar10(options.input, options.limit);
    case Format::cifar100:
      return read_cifar100(options.input, options.limit, options.cifar100_label);
    case Format::stl10:
      return read_stl10(options.input, options.limit);
    case Format::idx:
      return read_idx(options.input, dataset, options.limit);
    case Format::folder:
      return read_image_folder(options.input, options.resize, options.limit);
  }
  FT_CHECK(false, "unhandled format ", static_cast<int>(options.format));
}

// A shard set already in the output folder is some earlier conversion's work: kept unless --force.
void require_free_output(const PrepOptions& options) {
  if (options.force || !paths::is_directory(options.output)) return;
  const std::regex shard_name(R"((train|test)-\d+-of-\d+\.h5)");
  std::vector<std::string> shards;
  for (const std::string& name : paths::list_directory(options.output))
    if (std::regex_match(name, shard_name) && paths::is_regular_file(paths::join(options.output, name)))
      shards.push_back(name);
  FT_REQUIRE(shards.empty(), "--output ", options.output, " already holds a shard set (", shards.size(),
             " files: ", shards.front(), ", ...): they are kept. Choose another folder, or pass --force to replace "
             "them");
}

}  // namespace

std::string default_dataset_name(Format format, const std::string& input) {
  switch (format) {
    case Format::cifar10:
      return "cifar10";
    case Format::cifar100:
      return "cifar100";
    case Format::stl10:
      return "stl10";
    case Format::idx:
      return idx_default_name(input);
    case Format::folder: {
      return paths::filename(paths::absolute(input));
    }
  }
  FT_CHECK(false, "unhandled format ", static_cast<int>(format));
}

PrepSummary run_prep(const PrepOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  FT_REQUIRE(options.shards >= 1, "--shards must be at least 1, not ", options.shards);
  FT_REQUIRE(options.limit >= 1, "--limit must be at least 1, not ", options.limit);
  FT_REQUIRE(options.resize >= 0, "--resize must be positive, not ", options.resize);
  require_free_output(options);
  PrepSummary summary;
  summary.dataset = options.name.empty() ? default_dataset_name(options.format, options.input) : options.name;

  RawDataset ds = read_dataset(options, summary.dataset);
  for (RawSplit* split : {&ds.train, &ds.test}) {
    if (options.resize > 0) resize_split(*split, options.resize);
    if (options.grayscale) grayscale_split(*split);
  }
  summary.source_sha256 = sha256_of_files(ds.source_files);
  const WrittenShards written =
      write_shard_set(ds, {summary.dataset, summary.source_sha256, options.shards}, options.output);

  summary.class_names = ds.class_names;
  summary.train_count = ds.train.count();
  summary.test_count = ds.test.count();
  summary.height = ds.train.height;
  summary.width = ds.train.width;
  summary.channels = ds.train.channels;
  summary.mean = written.stats.mean;
  summary.std = written.stats.std;
  summary.files = written.files;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace ft::prep
