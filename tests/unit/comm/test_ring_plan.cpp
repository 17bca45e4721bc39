// Tests of comm/ring_plan.cpp: segments tile the vector within the size bound, pieces map ranges onto
// regions, and running the schedule on simulated ranks (messages copied step by step) sums exactly.
#include "comm/ring_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace ft {
namespace {

using Layout = std::vector<std::size_t>;

std::vector<double> flatten(const std::vector<std::vector<double>>& regions) {
  std::vector<double> flat;
  for (const auto& r : regions) flat.insert(flat.end(), r.begin(), r.end());
  return flat;
}

// The values of elements [begin, end) of one rank, read through the plan's pieces.
std::vector<double> read(const RingPlan& plan, const std::vector<std::vector<double>>& regions, int chunk) {
  std::vector<double> out;
  for (std::size_t j = 0; j < plan.segments(); ++j) {
    const auto [begin, end] = plan.segment(chunk, j);
    for (const RegionPiece& p : plan.pieces(begin, end))
      for (std::size_t k = 0; k < p.count; ++k) out.push_back(regions[p.region][p.offset + k]);
  }
  return out;
}

template <typename Apply>
void write(const RingPlan& plan, std::vector<std::vector<double>>& regions, int chunk, const std::vector<double>& in,
           Apply apply) {
  std::size_t at = 0;
  for (std::size_t j = 0; j < plan.segments(); ++j) {
    const auto [begin, end] = plan.segment(chunk, j);
    for (const RegionPiece& p : plan.pieces(begin, end))
      for (std::size_t k = 0; k < p.count; ++k) apply(regions[p.region][p.offset + k], in.at(at++));
  }
  ASSERT_EQ(at, in.size()) << "message and receiving chunk differ in length";
}

void simulate(const Layout& layout, int ranks, std::size_t max_segment) {
  SCOPED_TRACE(::testing::Message() << "ranks " << ranks << ", max_segment " << max_segment);
  const RingPlan plan(layout, ranks, max_segment);
  std::vector<std::vector<std::vector<double>>> data(ranks);
  std::vector<double> expected;
  for (int r = 0; r < ranks; ++r) {
    double value = 1 + r * 1000;
    for (std::size_t n : layout) {
      data[r].emplace_back(n);
      for (double& x : data[r].back()) x = value++;
    }
    const auto flat = flatten(data[r]);
    if (expected.empty()) expected.assign(flat.size(), 0);
    for (std::size_t i = 0; i < flat.size(); ++i) expected[i] += flat[i];
  }
  for (int step = 0; step + 1 < ranks; ++step) {
    std::vector<std::vector<double>> sent(ranks);
    for (int r = 0; r < ranks; ++r) sent[r] = read(plan, data[r], plan.reduce_scatter_send(r, step));
    for (int r = 0; r < ranks; ++r)
      write(plan, data[r], plan.reduce_scatter_recv(r, step), sent[(r + ranks - 1) % ranks],
            [](double& x, double y) { x += y; });
  }
  for (int step = 0; step + 1 < ranks; ++step) {
    std::vector<std::vector<double>> sent(ranks);
    for (int r = 0; r < ranks; ++r) sent[r] = read(plan, data[r], plan.all_gather_send(r, step));
    for (int r = 0; r < ranks; ++r)
      write(plan, data[r], plan.all_gather_recv(r, step), sent[(r + ranks - 1) % ranks],
            [](double& x, double y) { x = y; });
  }
  for (int r = 0; r < ranks; ++r) ASSERT_EQ(flatten(data[r]), expected) << "rank " << r;
}

TEST(RingPlan, SimulatedRanksSumExactly) {
  const std::vector<Layout> layouts = {{}, {0}, {1}, {5}, {3, 0, 2}, {1000}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
                                       {4096, 1, 4096, 7}, {0, 0, 13, 0}};
  for (const Layout& layout : layouts)
    for (int ranks : {1, 2, 3, 4, 5, 7})
      for (std::size_t max_segment : {1, 3, 64, 1 << 20}) simulate(layout, ranks, max_segment);
}

TEST(RingPlan, SegmentsTileTheVectorWithinTheBound) {
  for (int ranks : {1, 2, 3, 8})
    for (std::size_t max_segment : {1, 5, 256}) {
      const RingPlan plan({700, 1, 300}, ranks, max_segment);
      EXPECT_EQ(plan.total(), 1001u);
      EXPECT_GE(plan.segments(), 2u) << "a chunk of several elements must pipeline";
      std::size_t next = 0, largest = 0;
      for (int c = 0; c < ranks; ++c)
        for (std::size_t j = 0; j < plan.segments(); ++j) {
          const auto [begin, end] = plan.segment(c, j);
          EXPECT_EQ(begin, next);
          EXPECT_LE(end - begin, max_segment);
          largest = std::max(largest, end - begin);
          next = end;
        }
      EXPECT_EQ(next, plan.total());
      EXPECT_EQ(plan.largest_segment(), largest) << "receive buffers are sized by it";
    }
}

// The fewest segments that keep every segment of the largest chunk within max_segment, and at least two
// once that chunk has two elements; found by trying counts upward, at exact multiples and either side.
TEST(RingPlan, SegmentsAreTheFewestThatFitTheBound) {
  for (int ranks : {1, 2, 3, 4})
    for (std::size_t max_segment : {1, 2, 3, 5})
      for (std::size_t total = 0; total <= 4 * 5 * 3 + 1; ++total) {
        std::size_t largest_chunk = 0;
        for (int c = 0; c < ranks; ++c) largest_chunk = std::max(largest_chunk, total * (c + 1) / ranks - total * c / ranks);
        auto largest_part = [&](std::size_t parts) {  // the chunk cut at length * j / parts, as segment() cuts it
          std::size_t most = 0;
          for (std::size_t j = 0; j < parts; ++j)
            most = std::max(most, largest_chunk * (j + 1) / parts - largest_chunk * j / parts);
          return most;
        };
        std::size_t fewest = largest_chunk >= 2 ? 2 : 1;
        while (largest_part(fewest) > max_segment) ++fewest;
        const RingPlan plan({total}, ranks, max_segment);
        EXPECT_EQ(plan.segments(), fewest) << total << " elements, " << ranks << " ranks, max " << max_segment;
      }
}

TEST(RingPlan, PiecesFollowRegionBoundariesAndSkipEmptyRegions) {
  const RingPlan plan({4, 0, 3, 5}, 2, 100);
  const auto pieces = plan.pieces(2, 10);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].region, 0u);
  EXPECT_EQ(pieces[0].offset, 2u);
  EXPECT_EQ(pieces[0].count, 2u);
  EXPECT_EQ(pieces[1].region, 2u);
  EXPECT_EQ(pieces[1].offset, 0u);
  EXPECT_EQ(pieces[1].count, 3u);
  EXPECT_EQ(pieces[2].region, 3u);
  EXPECT_EQ(pieces[2].offset, 0u);
  EXPECT_EQ(pieces[2].count, 3u);
  EXPECT_TRUE(plan.pieces(5, 5).empty());
}

TEST(RingPlan, EveryRankSendsWhatItsRightNeighbourExpects) {
  for (int ranks : {2, 3, 6}) {
    const RingPlan plan({10}, ranks, 4);
    for (int step = 0; step + 1 < ranks; ++step)
      for (int r = 0; r < ranks; ++r) {
        EXPECT_EQ(plan.reduce_scatter_send(r, step), plan.reduce_scatter_recv((r + 1) % ranks, step));
        EXPECT_EQ(plan.all_gather_send(r, step), plan.all_gather_recv((r + 1) % ranks, step));
      }
    // After the reduce-scatter rank r owns chunk r + 1, which it sends first in the all-gather.
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(plan.all_gather_send(r, 0), (r + 1) % ranks);
  }
}

}  // namespace
}  // namespace ft
