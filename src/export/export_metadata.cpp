// The export metadata built once from a ModelInfo and rendered twice: JSON text for safetensors and
// IValues for the torch format, so both formats always carry the same keys and values.
#include "export/export_metadata.h"

#include <nlohmann/json.hpp>

#include "config/choices.h"
#include "config/loader.h"

namespace ft {
namespace {

nlohmann::ordered_json metadata_json(const ModelInfo& info) {
  nlohmann::ordered_json m;
  m["format"] = kExportFormat;
  m["format_version"] = kExportFormatVersion;
  m["model"] = choice_name(info.config.model.name);
  m["config"] = dump_config(info.config);
  m["input_shape"] = {info.input.channels, info.input.height, info.input.width};
  m["classes"] = info.input.classes;
  m["class_names"] = info.class_names;
  m["mean"] = info.mean;
  m["std"] = info.std;
  m["normalize"] = info.config.data.normalize;
  m["dataset"] = info.dataset;
  return m;
}

// Scalars as themselves, arrays as untyped lists (typed ones pickle as TorchScript globals that
// torch.load(weights_only=True) refuses).
c10::IValue ivalue_of(const nlohmann::ordered_json& value) {
  if (value.is_string()) return c10::IValue(value.get<std::string>());
  if (value.is_boolean()) return c10::IValue(value.get<bool>());
  if (value.is_number_integer()) return c10::IValue(value.get<std::int64_t>());
  if (value.is_number()) return c10::IValue(value.get<double>());
  c10::impl::GenericList list(c10::AnyType::get());
  for (const auto& item : value) list.push_back(ivalue_of(item));
  return list;
}

}  // namespace

std::map<std::string, std::string> export_metadata_text(const ModelInfo& info) {
  std::map<std::string, std::string> out;
  const auto metadata = metadata_json(info);
  for (const auto& [key, value] : metadata.items())
    out[key] = value.is_string() ? value.get<std::string>() : value.dump();
  return out;
}

c10::IValue export_metadata_value(const ModelInfo& info) {
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  const auto metadata = metadata_json(info);
  for (const auto& [key, value] : metadata.items()) dict.insert(key, ivalue_of(value));
  return dict;
}

}  // namespace ft
