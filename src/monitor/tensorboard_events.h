// The Event messages of a TensorBoard event file (TensorFlow's event.proto and summary.proto), encoded for
// the records of event_file.h: the file version, a session start, scalars and a text summary.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ft {

// One scalar of a summary: a tag ("epoch/test_acc") and its value, stored as a 32-bit float.
struct Scalar {
  std::string tag;
  double value = 0;
};

// The first record of every event file: file_version "brain.Event:2", which makes TensorBoard honour the
// session-start events below.
std::string file_version_event(double wall_time);
// SessionLog START at `step`: TensorBoard drops what earlier files of the folder logged at `step` or later,
// as it does after a restarted TensorFlow job (a resumed run's records past its checkpoint).
std::string session_start_event(double wall_time, std::int64_t step);
// One Summary holding every scalar at `step` (simple_value fields).
std::string scalars_event(double wall_time, std::int64_t step, const std::vector<Scalar>& scalars);
// A text summary (the text plugin's string tensor, rendered as markdown by TensorBoard).
std::string text_event(double wall_time, std::int64_t step, std::string_view tag, std::string_view text);

}  // namespace ft
