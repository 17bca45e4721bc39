// Span staging: one pass to classify the spans and size the staging buffer, memcpy in and out.
#include "comm/span_staging.h"

#include <cstring>

namespace ft {

SpanStaging::SpanStaging(const std::vector<HostSpan>& spans, std::size_t element_size, std::size_t small_bytes) {
  std::size_t staged_bytes = 0;
  for (const HostSpan& span : spans)
    if (span.count > 0 && span.count * element_size < small_bytes) staged_bytes += span.count * element_size;
  buffer_.resize(staged_bytes);
  bool placed = false;
  for (const HostSpan& span : spans) {
    if (span.count == 0) continue;
    total_ += span.count;
    const std::size_t bytes = span.count * element_size;
    if (bytes >= small_bytes) {
      regions_.push_back({static_cast<char*>(span.data), span.count});
      continue;
    }
    const std::size_t offset = staged_.empty() ? 0 : staged_.back().offset + staged_.back().bytes;
    staged_.push_back({static_cast<char*>(span.data), bytes, offset});
    if (!placed) regions_.push_back({buffer_.data(), staged_bytes / element_size});
    placed = true;
  }
}

void SpanStaging::gather() {
  for (const Staged& s : staged_) std::memcpy(buffer_.data() + s.offset, s.span, s.bytes);
}

void SpanStaging::scatter() {
  for (const Staged& s : staged_) std::memcpy(s.span, buffer_.data() + s.offset, s.bytes);
}

}  // namespace ft
