// The two export file formats as bytes: safetensors (the Hugging Face layout, written here from its
// specification) and the zip-of-pickles that Python's torch.load reads (written with LibTorch's pickler).
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ft {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// An 8-byte little-endian header length, the JSON header (dtype, shape and byte range of every tensor,
// plus `metadata` as __metadata__), padded to 8 bytes, then the tensors' bytes in order.
std::string safetensors_bytes(const NamedTensors& tensors, const std::map<std::string, std::string>& metadata);

// {"state_dict": {name: tensor}, "metadata": metadata} in torch.save's format, readable with
// torch.load(path, weights_only=True).
std::string torch_save_bytes(const NamedTensors& tensors, const c10::IValue& metadata);

}  // namespace ft
