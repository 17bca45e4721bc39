// Ring schedule arithmetic: chunk and segment bounds by integer division (every rank computes the same
// ones), and region lookup by binary search over the prefix sums.
#include "comm/ring_plan.h"

#include <algorithm>

#include "runtime/error.h"

namespace ft {

RingPlan::RingPlan(const std::vector<std::size_t>& region_counts, int ranks, std::size_t max_segment) : ranks_(ranks) {
  FT_CHECK(ranks >= 1, "ring all-reduce needs at least one rank, got ", ranks);
  FT_CHECK(max_segment >= 1, "ring segments must hold at least one element");
  starts_.reserve(region_counts.size() + 1);
  starts_.push_back(0);
  for (std::size_t count : region_counts) starts_.push_back(total_ += count);
  const std::size_t largest_chunk = (total_ + ranks_ - 1) / ranks_;
  segments_ = std::max<std::size_t>({1, (largest_chunk + max_segment - 1) / max_segment,
                                     std::min<std::size_t>(2, largest_chunk)});
}

std::size_t RingPlan::chunk_begin(int chunk) const {
  return static_cast<std::size_t>(static_cast<unsigned __int128>(total_) * chunk / ranks_);
}

std::size_t RingPlan::largest_segment() const {
  const std::size_t largest_chunk = (total_ + ranks_ - 1) / ranks_;
  return (largest_chunk + segments_ - 1) / segments_;
}

std::pair<std::size_t, std::size_t> RingPlan::segment(int chunk, std::size_t j) const {
  const std::size_t begin = chunk_begin(chunk), length = chunk_begin(chunk + 1) - begin;
  return {begin + length * j / segments_, begin + length * (j + 1) / segments_};
}

std::vector<RegionPiece> RingPlan::pieces(std::size_t begin, std::size_t end) const {
  std::vector<RegionPiece> out;
  if (begin >= end) return out;
  // The last region starting at or before `begin`; empty regions are skipped by the loop below.
  std::size_t region = static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), begin) -
                                                starts_.begin()) - 1;
  for (std::size_t at = begin; at < end; ++region) {
    const std::size_t stop = std::min(end, starts_[region + 1]);
    if (stop > at) out.push_back({region, at - starts_[region], stop - at});
    at = std::max(at, stop);
  }
  return out;
}

}  // namespace ft
