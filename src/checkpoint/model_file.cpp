// Model files are LibTorch serialization archives: "model.<name>" tensors as in checkpoints, plus the run's
// config, the input shape, class names and normalisation, so that no data set is needed to use them.
#include "checkpoint/model_file.h"

#include <torch/serialize.h>
#include <torch/serialize/archive.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "config/loader.h"
#include "io/checksummed_file.h"
#include "io/paths.h"
#include "runtime/error.h"
#include "shard/shard_reader.h"

namespace ft {
namespace {

constexpr const char* kKind = "fusetrain-model";
// 2: the file ends in a CRC-32 trailer (io/checksummed_file.h). 1: written before model files carried one;
// still read, unverified, with a note.
constexpr std::int64_t kModelFormat = 2;
constexpr std::int64_t kUnverifiedModelFormat = 1;

std::string shape_text(const InputShape& s) {
  return cat(s.height, "x", s.width, "x", s.channels, " images of ", s.classes, " classes");
}

std::vector<double> doubles(const at::Tensor& t) {
  const auto c = t.to(at::kCPU, at::kDouble).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

at::Tensor tensor_of(const std::vector<double>& values) {
  return at::tensor(values, at::TensorOptions().dtype(at::kDouble));
}

// LibTorch archives are zip files: anything else is not a model, whatever LibTorch's reader would say.
bool starts_as_zip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

// `problem`: what the checksum check found ("" when the file verified).
void load_archive(torch::serialize::InputArchive& archive, const std::string& path, const std::string& problem) {
  FT_REQUIRE(paths::exists(path), path, " does not exist");
  FT_REQUIRE(paths::is_regular_file(path), path, " is not a file");
  FT_REQUIRE(starts_as_zip(path), path, " is not a fusetrain model file or checkpoint (not a LibTorch archive)");
  try {
    archive.load_from(path, at::Device(at::kCPU));
  } catch (const c10::Error&) {
    throw Error(cat(path, " is damaged (", problem.empty() ? "it verifies but LibTorch cannot read it" : problem,
                    "): it starts as a LibTorch archive but cannot be read as one"));
  }
}

// A model file of format 1 has no checksum to verify; every other file must verify.
bool unverified_legacy_model(torch::serialize::InputArchive& archive) {
  c10::IValue kind, format;
  return archive.try_read("kind", kind) && kind.isString() && kind.toStringRef() == kKind &&
         archive.try_read("format", format) && format.isInt() && format.toInt() == kUnverifiedModelFormat;
}

// Opens a model file or checkpoint after verifying its checksum; throws naming the file when it is damaged.
void open_verified(torch::serialize::InputArchive& archive, const std::string& path) {
  const std::string problem = file_checksum_problem(path);
  const bool no_trailer = problem.rfind("no checksum", 0) == 0;
  FT_REQUIRE(problem.empty() || no_trailer || problem == "missing", path, " is damaged (", problem,
             "): it is refused rather than read with wrong numbers");
  load_archive(archive, path, problem);
  if (!no_trailer) return;
  FT_REQUIRE(unverified_legacy_model(archive), path, " is damaged (", problem, ")");
  std::fprintf(stderr, "note: %s was written before model files carried a checksum: it cannot be verified\n",
               path.c_str());
}

std::string read_text(torch::serialize::InputArchive& archive, const std::string& key, const std::string& path) {
  c10::IValue value;
  FT_REQUIRE(archive.try_read(key, value) && value.isString(), "model file ", path, " has no '", key, "' entry");
  return value.toStringRef();
}

at::Tensor read_tensor(torch::serialize::InputArchive& archive, const std::string& key, const std::string& path) {
  at::Tensor t;
  FT_REQUIRE(archive.try_read(key, t), path, " has no '", key, "' entry");
  return t;
}

// The run config stored in a model file or checkpoint.
Config stored_config(const std::string& yaml, const std::string& path) {
  try {
    return parse_config(yaml, cat(path, " (stored config)"));
  } catch (const Error& e) {
    throw Error(cat(path, " holds a config this fusetrain cannot read: ", e.what()));
  }
}

ModelInfo read_model_info(torch::serialize::InputArchive& archive, const std::string& path) {
  ModelInfo info;
  info.config = stored_config(read_text(archive, "config", path), path);
  info.dataset = read_text(archive, "dataset", path);
  std::istringstream names(read_text(archive, "class_names", path));
  for (std::string line; std::getline(names, line);) info.class_names.push_back(line);
  const auto shape = read_tensor(archive, "input_shape", path).to(at::kLong);
  FT_REQUIRE(shape.numel() == 4, "model file ", path, ": input_shape holds ", shape.numel(), " values, not 4");
  auto a = shape.accessor<std::int64_t, 1>();
  info.input = {static_cast<int>(a[0]), static_cast<int>(a[1]), static_cast<int>(a[2]), static_cast<int>(a[3])};
  info.mean = doubles(read_tensor(archive, "mean", path));
  info.std = doubles(read_tensor(archive, "std", path));
  FT_REQUIRE(static_cast<int>(info.class_names.size()) == info.input.classes, "model file ", path, " names ",
             info.class_names.size(), " classes but its network has ", info.input.classes, " outputs");
  return info;
}

// A checkpoint describes no data: its input comes from the shards it was trained on (or `data_dir`).
ModelInfo checkpoint_info(torch::serialize::InputArchive& archive, const std::string& path,
                          const std::string& data_dir) {
  // The fingerprint is the config followed by a last line "ranks: N" (config/fingerprint.h).
  std::string fingerprint = read_text(archive, "fingerprint", path);
  fingerprint = fingerprint.substr(0, fingerprint.rfind("ranks:"));
  const Config config = stored_config(fingerprint, path);
  const std::string dir = data_dir.empty() ? config.data.path : data_dir;
  try {
    return model_info(config, ShardReader(dir, "train").meta());
  } catch (const Error& e) {
    throw Error(cat("checkpoint ", path, " stores no data description and the shards it was trained on cannot be "
                    "read (", e.what(), "): pass the data folder with --data"));
  }
}

}  // namespace

ModelInfo model_info(const Config& config, const ShardMeta& meta) {
  ModelInfo info;
  info.config = config;
  info.input = {meta.channels, meta.height, meta.width, static_cast<int>(meta.class_names.size())};
  info.dataset = meta.dataset;
  info.class_names = meta.class_names;
  info.mean = meta.mean;
  info.std = meta.std;
  return info;
}

std::vector<std::pair<std::string, at::Tensor>> model_state(Network& network) {
  std::vector<std::pair<std::string, at::Tensor>> state;
  for (const auto& item : network.named_parameters()) state.emplace_back(item.key(), item.value());
  for (const auto& item : network.named_buffers()) state.emplace_back(item.key(), item.value());
  return state;
}

void write_model_tensors(torch::serialize::OutputArchive& archive, Network& network) {
  for (const auto& [name, tensor] : model_state(network))
    archive.write(cat("model.", name), tensor.detach().to(at::kCPU).contiguous());
}

void read_model_tensors(torch::serialize::InputArchive& archive, Network& network, const std::string& path) {
  at::NoGradGuard no_grad;
  for (auto& [name, tensor] : model_state(network)) {
    at::Tensor stored;
    FT_REQUIRE(archive.try_read(cat("model.", name), stored), path, " has no tensor '", name,
               "' of this network (a file of another model or input shape?)");
    FT_REQUIRE(stored.sizes() == tensor.sizes(), path, ": tensor '", name, "' has shape ", stored.sizes(),
               " but this network's has ", tensor.sizes());
    tensor.detach().copy_(stored);
  }
}

// Serialised in memory, then written with checked system calls: LibTorch's file writer throws from a
// destructor when the disk fills, which would terminate the process.
std::string archive_bytes(torch::serialize::OutputArchive& archive, const std::string& path, const char* what) {
  std::ostringstream bytes;
  try {
    archive.save_to(bytes);
  } catch (const c10::Error& e) {
    throw Error(cat("cannot serialise ", what, " ", path, ": ", e.what_without_backtrace()));
  }
  return bytes.str();
}

void save_model_file(const std::string& path, Network& network, const ModelInfo& info) {
  torch::serialize::OutputArchive archive;
  archive.write("kind", c10::IValue(std::string(kKind)));
  archive.write("format", c10::IValue(kModelFormat));
  archive.write("config", c10::IValue(dump_config(info.config)));
  archive.write("dataset", c10::IValue(info.dataset));
  std::string names;
  for (const auto& n : info.class_names) names += n + "\n";
  archive.write("class_names", c10::IValue(names));
  const auto& s = info.input;
  archive.write("input_shape", at::tensor({std::int64_t{s.channels}, std::int64_t{s.height}, std::int64_t{s.width},
                                           std::int64_t{s.classes}}, at::kLong));
  archive.write("mean", tensor_of(info.mean));
  archive.write("std", tensor_of(info.std));
  write_model_tensors(archive, network);
  write_checksummed_file(path, archive_bytes(archive, path, "model file"));
}

namespace {

// The description a verified model file or checkpoint archive holds (see load_trained_model).
ModelInfo archive_model_info(torch::serialize::InputArchive& archive, const std::string& path,
                             const std::string& data_dir) {
  c10::IValue kind, format;
  if (archive.try_read("kind", kind)) {
    FT_REQUIRE(kind.isString() && kind.toStringRef() == kKind, path, " is not a fusetrain model file");
    FT_REQUIRE(archive.try_read("format", format) && format.isInt() &&
                   (format.toInt() == kModelFormat || format.toInt() == kUnverifiedModelFormat),
               "model file ", path, " was written by another fusetrain version (this one reads model formats ",
               kUnverifiedModelFormat, " and ", kModelFormat, ")");
    return read_model_info(archive, path);
  }
  if (archive.try_read("fingerprint", format)) return checkpoint_info(archive, path, data_dir);
  throw Error(cat(path, " is neither a fusetrain model file nor a checkpoint"));
}

}  // namespace

ModelInfo load_model_info(const std::string& path, const std::string& data_dir) {
  torch::serialize::InputArchive archive;
  open_verified(archive, path);
  return archive_model_info(archive, path, data_dir);
}

TrainedModel load_trained_model(const std::string& path, const std::string& data_dir) {
  torch::serialize::InputArchive archive;
  open_verified(archive, path);
  TrainedModel model;
  model.info = archive_model_info(archive, path, data_dir);
  // make_network builds CPU float32 tensors already; Module::to(dtype) would also turn the integer buffers
  // (BatchNorm's num_batches_tracked, int64) into floats, which exports must keep as int64.
  model.network = make_network(model.info.config.model, model.info.input);
  read_model_tensors(archive, *model.network, path);
  model.network->eval();
  return model;
}

void require_compatible_data(const ModelInfo& info, const ShardMeta& meta, const std::string& model_path,
                             const std::string& data_dir) {
  const InputShape data{meta.channels, meta.height, meta.width, static_cast<int>(meta.class_names.size())};
  const auto& m = info.input;
  FT_REQUIRE(data.channels == m.channels && data.height == m.height && data.width == m.width &&
                 data.classes == m.classes,
             "the network in ", model_path, " takes ", shape_text(m), " but data ", data_dir, " holds ",
             shape_text(data));
}

}  // namespace ft
