// The schedule of a ring all-reduce over a vector laid out as contiguous regions: which chunk each rank
// sends and receives at each step, and how chunks split into segments and segments into region pieces.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace ft {

struct RegionPiece {
  std::size_t region;
  std::size_t offset;  // elements into the region
  std::size_t count;
};

// The vector's `total` elements split into `ranks` near-equal chunks, each chunk into segments() parts
// of at most `max_segment` elements (at least two, so one segment's reduction overlaps the next one's
// transfer). Reduce-scatter runs ranks-1 steps in which every rank sends one chunk to its right
// neighbour and adds the chunk arriving from its left one; afterwards rank r holds the complete sum of
// chunk r+1. All-gather then passes the complete chunks around the ring in ranks-1 more steps.
class RingPlan {
 public:
  RingPlan(const std::vector<std::size_t>& region_counts, int ranks, std::size_t max_segment);

  int ranks() const { return ranks_; }
  std::size_t total() const { return total_; }
  std::size_t segments() const { return segments_; }
  // The most elements any segment holds (the size of a buffer that receives one).
  std::size_t largest_segment() const;

  // Elements [first, second) of segment j of chunk c, in the concatenation of the regions.
  std::pair<std::size_t, std::size_t> segment(int chunk, std::size_t j) const;
  // The region pieces covering elements [begin, end), in order (none for an empty range).
  std::vector<RegionPiece> pieces(std::size_t begin, std::size_t end) const;
  // Chunk indices at step t (0 <= t < ranks - 1) of each phase.
  int reduce_scatter_send(int rank, int step) const { return wrap(rank - step); }
  int reduce_scatter_recv(int rank, int step) const { return wrap(rank - step - 1); }
  int all_gather_send(int rank, int step) const { return wrap(rank + 1 - step); }
  int all_gather_recv(int rank, int step) const { return wrap(rank - step); }

 private:
  int wrap(int chunk) const { return ((chunk % ranks_) + ranks_) % ranks_; }
  std::size_t chunk_begin(int chunk) const;

  std::vector<std::size_t> starts_;  // prefix sums: region i covers [starts_[i], starts_[i + 1])
  int ranks_;
  std::size_t total_ = 0;
  std::size_t segments_ = 1;
};

}  // namespace ft
