// safetensors header and payload assembly, and the state-dict dictionary handed to torch::pickle_save.
// Tensors are copied to contiguous CPU memory; the machine is little-endian, as both formats require.
#include "export/export_formats.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <nlohmann/json.hpp>

#include "runtime/error.h"

namespace ft {
namespace {

const char* safetensors_dtype(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return "F32";
    case at::kDouble: return "F64";
    case at::kHalf: return "F16";
    case at::kBFloat16: return "BF16";
    case at::kLong: return "I64";
    case at::kInt: return "I32";
    case at::kByte: return "U8";
    case at::kBool: return "BOOL";
    default: throw Error(cat("safetensors export: no dtype code for ", at::toString(type)));
  }
}

at::Tensor host_copy(const at::Tensor& t) { return t.detach().to(at::kCPU).contiguous(); }

}  // namespace

std::string safetensors_bytes(const NamedTensors& tensors, const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header;
  header["__metadata__"] = metadata;
  std::vector<at::Tensor> payload;
  std::int64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    payload.push_back(host_copy(tensor));
    const auto& t = payload.back();
    const std::int64_t bytes = t.numel() * static_cast<std::int64_t>(t.element_size());
    header[name] = {{"dtype", safetensors_dtype(t.scalar_type())},
                    {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((static_cast<std::uint64_t>(json.size()) >> (8 * i)) & 0xff);
  out += json;
  out.reserve(out.size() + static_cast<std::size_t>(offset));
  for (const auto& t : payload)
    out.append(static_cast<const char*>(t.data_ptr()), static_cast<std::size_t>(t.numel() * t.element_size()));
  return out;
}

// LibTorch's pickle_save tags dictionaries and lists with their TorchScript types, which Python's
// weights_only loader refuses; this pickler writes plain containers, the zip layout stays LibTorch's.
std::string torch_save_bytes(const NamedTensors& tensors, const c10::IValue& metadata) {
  c10::impl::GenericDict state(c10::StringType::get(), c10::TensorType::get());
  for (const auto& [name, tensor] : tensors) state.insert(name, host_copy(tensor));
  c10::impl::GenericDict top(c10::StringType::get(), c10::AnyType::get());
  top.insert("state_dict", state);
  top.insert("metadata", metadata);
  std::string pickled;
  torch::jit::Pickler pickler([&](const char* bytes, size_t size) { pickled.append(bytes, size); }, nullptr, nullptr,
                              nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(top);
  pickler.stop();
  std::string out;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* bytes, size_t size) {
    out.append(static_cast<const char*>(bytes), size);
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), pickler.tensorData(), writer);
  writer.writeEndOfFile();
  return out;
}

}  // namespace ft
