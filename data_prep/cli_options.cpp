// Option table and validation for fusetrain-prep. Every check that needs only the command line happens
// here, before any input is read, and says which option is wrong and what it accepts.
#include "data_prep/cli_options.h"

#include <boost/program_options.hpp>

#include <sstream>

namespace ft::prep {

namespace po = boost::program_options;

namespace {

constexpr const char* kIntro =
    "fusetrain-prep: convert an official data-set release into HDF5 shards for fusetrain.\n"
    "\n"
    "Usage: fusetrain-prep --format FORMAT --input DIR --output DIR [options]\n"
    "\n"
    "Formats and the files they read from --input:\n"
    "  cifar10   data_batch_1..5.bin, test_batch.bin [batches.meta.txt] (or DIR/cifar-10-batches-bin/)\n"
    "  cifar100  train.bin, test.bin [fine_label_names.txt] (or DIR/cifar-100-binary/)\n"
    "  stl10     train_X.bin, train_y.bin, test_X.bin, test_y.bin [class_names.txt] (or DIR/stl10_binary/)\n"
    "  idx       {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (MNIST, Fashion-MNIST)\n"
    "  folder    train/<class>/*.{jpg,jpeg,png} and test/<class>/... (classes: sorted folder names;\n"
    "            images: each class's files by name, classes interleaved so any prefix is balanced)\n"
    "\n"
    "Writes OUTPUT/train-0000k-of-0000N.h5 and OUTPUT/test-0000k-of-0000N.h5: /images uint8 [N,H,W,C],\n"
    "/labels int32 [N], and attributes dataset, split, class_names, mean, std (per channel, of the train\n"
    "split, in [0,1] units), shard_index, shard_count, source_sha256, format_version. Shards are staged in\n"
    "OUTPUT/.partial-<pid>/ and moved into place only when all are written.\n"
    "\n"
    "Exit status: 0 success, 1 bad or unreadable input, 2 bad command line.\n"
    "\n"
    "Options";

constexpr const char* kExamples =
    "\nExamples:\n"
    "  fusetrain-prep --format idx --input /usr/share/datasets/fashion-mnist --output data/fashion-mnist\n"
    "  fusetrain-prep --format cifar10 --input ~/cifar-10-batches-bin --output data/cifar10 --shards 4\n"
    "  fusetrain-prep --format stl10 --input ~/stl10_binary --output data/stl10-128 --resize 128\n";

po::options_description option_table() {
  po::options_description table(kIntro, 100);
  table.add_options()
    ("help,h", "print this help and exit")
    ("format", po::value<std::string>()->value_name("FORMAT"),
     "input format: cifar10, cifar100, stl10, idx or folder (required)")
    ("input", po::value<std::string>()->value_name("DIR"), "folder holding the release's files (required)")
    ("output", po::value<std::string>()->value_name("DIR"),
     "folder for the shards, created if missing; one that already holds shards is refused unless --force "
     "(required)")
    ("force", po::bool_switch(), "replace the shard set already in --output (with every shard it has)")
    ("shards", po::value<std::int64_t>()->value_name("N")->default_value(1),
     "shards per split, near-equal and contiguous; N = number of ranks gives one file per rank")
    ("grayscale", po::bool_switch(), "convert RGB to 1-channel gray (ITU-R BT.601 weights)")
    ("resize", po::value<int>()->value_name("S"),
     "resize every image to S x S (bilinear when enlarging, area average when shrinking)")
    ("limit", po::value<std::int64_t>()->value_name("N"),
     "keep only the first N images of each split (folder: classes taken in turn, files by name)")
    ("name", po::value<std::string>()->value_name("NAME"),
     "dataset attribute (default: cifar10, cifar100, stl10, fashion-mnist or mnist, or the folder's name)")
    ("label", po::value<std::string>()->value_name("fine|coarse")->default_value("fine"),
     "cifar100 only: the 100 fine classes or the 20 coarse superclasses");
  return table;
}

std::string help_text(const po::options_description& table) {
  std::ostringstream out;
  out << table << kExamples;
  return out.str();
}

template <typename T>
T positive(const po::variables_map& vm, const char* name) {
  const T value = vm[name].as<T>();
  if (value < 1) throw UsageError(cat("--", name, " must be at least 1, not ", value));
  return value;
}

}  // namespace

Format format_from_name(const std::string& name) {
  if (name == "cifar10") return Format::cifar10;
  if (name == "cifar100") return Format::cifar100;
  if (name == "stl10") return Format::stl10;
  if (name == "idx") return Format::idx;
  if (name == "folder") return Format::folder;
  throw UsageError(cat("unknown --format '", name, "' (expected cifar10, cifar100, stl10, idx or folder)"));
}

CommandLine parse_command_line(int argc, const char* const argv[]) {
  const po::options_description table = option_table();
  CommandLine command;
  command.help_text = help_text(table);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(table).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  if (vm.count("help")) {
    command.help = true;
    return command;
  }
  for (const char* required : {"format", "input", "output"})
    if (!vm.count(required)) throw UsageError(cat("--", required, " is required"));

  PrepOptions& o = command.options;
  o.format = format_from_name(vm["format"].as<std::string>());
  o.input = vm["input"].as<std::string>();
  o.output = vm["output"].as<std::string>();
  o.shards = positive<std::int64_t>(vm, "shards");
  o.grayscale = vm["grayscale"].as<bool>();
  o.force = vm["force"].as<bool>();
  if (vm.count("resize")) o.resize = positive<int>(vm, "resize");
  if (vm.count("limit")) o.limit = positive<std::int64_t>(vm, "limit");
  if (vm.count("name")) {
    o.name = vm["name"].as<std::string>();
    if (o.name.empty()) throw UsageError("--name must not be empty");
  }

  const std::string label = vm["label"].as<std::string>();
  if (label != "fine" && label != "coarse")
    throw UsageError(cat("unknown --label '", label, "' (expected fine or coarse)"));
  if (!vm["label"].defaulted() && o.format != Format::cifar100)
    throw UsageError("--label applies to --format cifar100 only");
  o.cifar100_label = label == "coarse" ? Cifar100Label::coarse : Cifar100Label::fine;
  return command;
}

}  // namespace ft::prep
