// What an exported network carries besides its tensors, under the keys the PyTorch rebuild tool reads
// (tools/export): the model and its config, the input shape, class names and normalisation.
#pragma once

#include <map>
#include <string>

#include <ATen/core/ivalue.h>

#include "checkpoint/model_file.h"

namespace ft {

// Identifies fusetrain exports and their layout version.
constexpr const char* kExportFormat = "fusetrain-export";
constexpr std::int64_t kExportFormatVersion = 1;

// safetensors metadata is text only: lists as JSON, numbers and booleans as their JSON text.
std::map<std::string, std::string> export_metadata_text(const ModelInfo& info);

// The same metadata with native values (str, int, bool, lists) for a torch.load-able dictionary.
c10::IValue export_metadata_value(const ModelInfo& info);

}  // namespace ft
