// Turns a list of host-memory spans into the contiguous regions a collective runs over: large spans
// stay where they are, and all small ones are copied together into one staging region and back.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/backend.h"

namespace ft {

struct SpanRegion {
  char* data;
  std::size_t count;  // elements
};

// The elements of all the regions together.
inline std::size_t total_count(const std::vector<SpanRegion>& regions) {
  std::size_t total = 0;
  for (const SpanRegion& region : regions) total += region.count;
  return total;
}

// Regions keep the spans' order, the staging region taking the place of the first small span. Every
// rank passing the same counts gets the same regions, so an element-wise collective over them is one
// over the spans. Zero-element spans are dropped.
class SpanStaging {
 public:
  // Spans of fewer than `small_bytes` bytes are staged; pass 0 to stage none, SIZE_MAX to stage all.
  SpanStaging(const std::vector<HostSpan>& spans, std::size_t element_size, std::size_t small_bytes);
  SpanStaging(const SpanStaging&) = delete;
  SpanStaging& operator=(const SpanStaging&) = delete;

  const std::vector<SpanRegion>& regions() const { return regions_; }
  std::size_t total_count() const { return total_; }
  std::size_t staged_bytes() const { return buffer_.size(); }
  // Copies the staged spans into the staging region (before the collective).
  void gather();
  // Copies the staging region back into the staged spans (after the collective).
  void scatter();

 private:
  struct Staged {
    char* span;
    std::size_t bytes;
    std::size_t offset;  // in buffer_
  };
  std::vector<char> buffer_;
  std::vector<Staged> staged_;
  std::vector<SpanRegion> regions_;
  std::size_t total_ = 0;
};

}  // namespace ft
