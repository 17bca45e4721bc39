// TensorBoard's Event, Summary, SessionLog and string-tensor messages, encoded field by field with
// proto_wire.h (no protobuf library): the field numbers below are those of TensorFlow's .proto files.
#include "monitor/tensorboard_events.h"

#include "monitor/proto_wire.h"

namespace ft {
namespace {

// event.proto: Event { double wall_time = 1; int64 step = 2; oneof what { string file_version = 3;
// Summary summary = 5; SessionLog session_log = 7; } }
enum EventField { kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5, kSessionLog = 7 };
// SessionLog { SessionStatus status = 1; } with START = 1.
constexpr int kSessionStatus = 1, kStart = 1;
// summary.proto: Summary { repeated Value value = 1; }
// Value { string tag = 1; float simple_value = 2; TensorProto tensor = 8; SummaryMetadata metadata = 9; }
enum ValueField { kValue = 1, kTag = 1, kSimpleValue = 2, kTensor = 8, kMetadata = 9 };
// SummaryMetadata { PluginData plugin_data = 1; DataClass data_class = 4; } PluginData { string plugin_name = 1; }
constexpr int kPluginData = 1, kPluginName = 1, kDataClass = 4, kDataClassTensor = 2;
// tensor.proto: TensorProto { DataType dtype = 1; TensorShapeProto tensor_shape = 2; repeated bytes
// string_val = 8; } with DT_STRING = 7; TensorShapeProto { repeated Dim dim = 2; } Dim { int64 size = 1; }
constexpr int kDtype = 1, kDtString = 7, kTensorShape = 2, kDim = 2, kDimSize = 1, kStringVal = 8;

// Zero values are left out, as protobuf's own encoder leaves out proto3 defaults.
std::string event_head(double wall_time, std::int64_t step) {
  std::string out;
  if (wall_time != 0) proto::put_double(out, kWallTime, wall_time);
  if (step != 0) proto::put_int64(out, kStep, step);
  return out;
}

// The text plugin's tensor: a one-element string vector, as TensorBoard's own text summaries write it.
std::string string_tensor(std::string_view text) {
  std::string dim, shape, tensor;
  proto::put_int64(dim, kDimSize, 1);
  proto::put_bytes(shape, kDim, dim);
  proto::put_int64(tensor, kDtype, kDtString);
  proto::put_bytes(tensor, kTensorShape, shape);
  proto::put_bytes(tensor, kStringVal, text);
  return tensor;
}

std::string text_metadata() {
  std::string plugin, metadata;
  proto::put_bytes(plugin, kPluginName, "text");
  proto::put_bytes(metadata, kPluginData, plugin);
  proto::put_int64(metadata, kDataClass, kDataClassTensor);
  return metadata;
}

}  // namespace

std::string file_version_event(double wall_time) {
  std::string out = event_head(wall_time, 0);
  proto::put_bytes(out, kFileVersion, "brain.Event:2");
  return out;
}

std::string session_start_event(double wall_time, std::int64_t step) {
  std::string log;
  proto::put_int64(log, kSessionStatus, kStart);
  std::string out = event_head(wall_time, step);
  proto::put_bytes(out, kSessionLog, log);
  return out;
}

std::string scalars_event(double wall_time, std::int64_t step, const std::vector<Scalar>& scalars) {
  std::string summary;
  for (const auto& s : scalars) {
    std::string value;
    proto::put_bytes(value, kTag, s.tag);
    proto::put_float(value, kSimpleValue, static_cast<float>(s.value));
    proto::put_bytes(summary, kValue, value);
  }
  std::string out = event_head(wall_time, step);
  proto::put_bytes(out, kSummary, summary);
  return out;
}

std::string text_event(double wall_time, std::int64_t step, std::string_view tag, std::string_view text) {
  std::string value;
  proto::put_bytes(value, kTag, tag);
  proto::put_bytes(value, kTensor, string_tensor(text));
  proto::put_bytes(value, kMetadata, text_metadata());
  std::string summary, out = event_head(wall_time, step);
  proto::put_bytes(summary, kValue, value);
  proto::put_bytes(out, kSummary, summary);
  return out;
}

}  // namespace ft
