// The trained network as a file of its own (weights, buffers, and what rebuilding and feeding it needs),
// written at the end of a run and read back, from it or from a training checkpoint, by evaluate/export/predict.
#pragma once

#include <ATen/ATen.h>
#include <torch/serialize/archive.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/schema.h"
#include "models/network.h"
#include "shard/shard_format.h"

namespace ft {

// What a trained network needs beyond its tensors: how to build it and what its inputs and outputs mean.
struct ModelInfo {
  Config config;                         // the resolved config of the run that trained it
  InputShape input;                      // channels, height, width, classes
  std::string dataset;                   // the shards' data-set name ("fashion-mnist", ...)
  std::vector<std::string> class_names;  // output i is class_names[i]
  std::vector<double> mean, std;         // per channel, [0,1] pixel units; applied when config.data.normalize
};

struct TrainedModel {
  ModelInfo info;
  std::shared_ptr<Network> network;  // on the CPU, fp32, in eval mode
};

// The description of data described by `meta` (a train split's shard attributes) for `config`.
ModelInfo model_info(const Config& config, const ShardMeta& meta);

// Every parameter and buffer by its dotted name, as LibTorch names them (the names exports keep).
std::vector<std::pair<std::string, at::Tensor>> model_state(Network& network);

// The network's tensors as "model.<name>" entries of a LibTorch archive (model files and checkpoints), and
// back: reading copies each into the live tensor (which keeps its device, dtype and layout) after checking
// that it exists and has the same shape, naming `path` otherwise.
void write_model_tensors(torch::serialize::OutputArchive& archive, Network& network);
void read_model_tensors(torch::serialize::InputArchive& archive, Network& network, const std::string& path);

// The bytes LibTorch would write for `archive`; a failure names `what` ("checkpoint", "model file") and `path`.
std::string archive_bytes(torch::serialize::OutputArchive& archive, const std::string& path, const char* what);

// Writes `network` (any device or layout; stored as contiguous CPU tensors) and `info` to `path`
// atomically with a CRC-32 trailer, read back and verified: the file appears only once complete.
void save_model_file(const std::string& path, Network& network, const ModelInfo& info);

// Reads a model file or a training checkpoint after verifying its checksum. A checkpoint stores no data
// description: it comes from the shards in `data_dir`, or in the checkpoint's data.path when that is empty.
// Errors name the file and what is wrong (damaged, not a fusetrain model, a tensor missing or of another
// shape).
TrainedModel load_trained_model(const std::string& path, const std::string& data_dir = "");

// The description alone of the model file or checkpoint at `path` (verified as load_trained_model does),
// without building the network or reading its tensors.
ModelInfo load_model_info(const std::string& path, const std::string& data_dir = "");

// Throws ft::Error naming `model_path` and `data_dir` when images of `meta`'s shape and classes cannot be
// fed to the model described by `info`.
void require_compatible_data(const ModelInfo& info, const ShardMeta& meta, const std::string& model_path,
                             const std::string& data_dir);

}  // namespace ft
