// The export byte layouts: safetensors' header (dtypes, shapes, contiguous byte ranges, metadata) and
// payload, and the torch.save dictionary read back by LibTorch's own unpickler.
#include <gtest/gtest.h>

#include <torch/serialize.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "export/export_formats.h"
#include "export/export_metadata.h"

namespace ft {
namespace {

NamedTensors sample_tensors() {
  return {{"conv.weight", at::randn({4, 3, 3, 3}).contiguous(at::MemoryFormat::ChannelsLast)},
          {"bn.running_mean", at::randn({4})},
          {"bn.num_batches_tracked", at::tensor(std::int64_t{7})}};
}

ModelInfo sample_info() {
  ModelInfo info;
  info.config.model.name = ModelName::conv_stack;
  info.input = {1, 28, 28, 2};
  info.class_names = {"T-shirt/top", "say \"hi\""};
  info.mean = {0.286};
  info.std = {0.353};
  info.dataset = "fashion-mnist";
  return info;
}

TEST(ExportFormats, SafetensorsHeaderAndPayload) {
  const auto tensors = sample_tensors();
  const std::string bytes = safetensors_bytes(tensors, export_metadata_text(sample_info()));
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | static_cast<unsigned char>(bytes[i]);
  ASSERT_EQ(header_size % 8, 0u);
  const auto header = nlohmann::json::parse(bytes.substr(8, header_size));
  const char* payload = bytes.data() + 8 + header_size;
  std::int64_t expected_offset = 0;
  for (const auto& [name, tensor] : tensors) {
    const auto& entry = header.at(name);
    const auto t = tensor.contiguous();
    EXPECT_EQ(entry.at("shape").get<std::vector<std::int64_t>>(), t.sizes().vec()) << name;
    const auto range = entry.at("data_offsets").get<std::vector<std::int64_t>>();
    EXPECT_EQ(range[0], expected_offset) << name;
    EXPECT_EQ(range[1] - range[0], t.numel() * t.element_size()) << name;
    EXPECT_EQ(std::memcmp(payload + range[0], t.data_ptr(), range[1] - range[0]), 0) << name;
    expected_offset = range[1];
  }
  EXPECT_EQ(header.at("conv.weight").at("dtype"), "F32");
  EXPECT_EQ(header.at("bn.num_batches_tracked").at("dtype"), "I64");
  EXPECT_EQ(bytes.size(), 8 + header_size + static_cast<std::uint64_t>(expected_offset));
  const auto& meta = header.at("__metadata__");
  EXPECT_EQ(meta.at("format"), "fusetrain-export");
  EXPECT_EQ(meta.at("model"), "conv_stack");
  EXPECT_EQ(nlohmann::json::parse(meta.at("input_shape").get<std::string>()), nlohmann::json({1, 28, 28}));
  EXPECT_EQ(nlohmann::json::parse(meta.at("class_names").get<std::string>())[1], "say \"hi\"");
  EXPECT_EQ(meta.at("normalize"), "true");
}

TEST(ExportFormats, TorchFileReadsBackAsStateDictAndMetadata) {
  const auto tensors = sample_tensors();
  const std::string bytes = torch_save_bytes(tensors, export_metadata_value(sample_info()));
  const auto top = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toGenericDict();
  const auto state = top.at("state_dict").toGenericDict();
  ASSERT_EQ(state.size(), tensors.size());
  for (const auto& [name, tensor] : tensors) EXPECT_TRUE(at::equal(state.at(name).toTensor(), tensor)) << name;
  const auto meta = top.at("metadata").toGenericDict();
  EXPECT_EQ(meta.at("model").toStringRef(), "conv_stack");
  EXPECT_EQ(meta.at("classes").toInt(), 2);
  const auto shape = meta.at("input_shape").toListRef();
  ASSERT_EQ(shape.size(), 3u);
  EXPECT_EQ(shape[1].toInt(), 28);
  EXPECT_EQ(meta.at("class_names").toListRef()[0].toStringRef(), "T-shirt/top");
  EXPECT_DOUBLE_EQ(meta.at("mean").toListRef()[0].toDouble(), 0.286);
  EXPECT_TRUE(meta.at("normalize").toBool());
  EXPECT_NE(meta.at("config").toStringRef().find("conv_stack"), std::string::npos);
}

}  // namespace
}  // namespace ft
