// Tests of comm/span_staging.cpp: large spans become regions in place, small ones share one staging
// region at the first small span's position, empty spans vanish, and gather/scatter round-trip.
#include "comm/span_staging.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace ft {
namespace {

TEST(SpanStaging, LargeSpansInPlaceSmallOnesStagedTogether) {
  std::vector<float> big(100, 1), small_a(3, 2), empty, small_b(2, 3), big2(50, 4);
  const std::vector<HostSpan> spans = {{big.data(), big.size()}, {small_a.data(), 3}, {empty.data(), 0},
                                       {small_b.data(), 2}, {big2.data(), big2.size()}};
  SpanStaging staging(spans, sizeof(float), 40 * sizeof(float));
  ASSERT_EQ(staging.regions().size(), 3u);
  EXPECT_EQ(staging.regions()[0].data, reinterpret_cast<char*>(big.data()));
  EXPECT_EQ(staging.regions()[0].count, 100u);
  EXPECT_EQ(staging.regions()[1].count, 5u);
  EXPECT_EQ(staging.regions()[2].data, reinterpret_cast<char*>(big2.data()));
  EXPECT_EQ(staging.total_count(), 155u);
  EXPECT_EQ(staging.staged_bytes(), 5 * sizeof(float));

  staging.gather();
  auto* staged = reinterpret_cast<float*>(staging.regions()[1].data);
  EXPECT_EQ(std::vector<float>(staged, staged + 5), (std::vector<float>{2, 2, 2, 3, 3}));
  for (int i = 0; i < 5; ++i) staged[i] = 10.0f + i;
  staging.scatter();
  EXPECT_EQ(small_a, (std::vector<float>{10, 11, 12}));
  EXPECT_EQ(small_b, (std::vector<float>{13, 14}));
  EXPECT_EQ(big[0], 1.0f);
}

TEST(SpanStaging, ThresholdsStageNothingOrEverything) {
  std::vector<double> a(4, 1), b(6, 2);
  const std::vector<HostSpan> spans = {{a.data(), 4}, {b.data(), 6}};
  SpanStaging none(spans, sizeof(double), 0);
  EXPECT_EQ(none.regions().size(), 2u);
  EXPECT_EQ(none.staged_bytes(), 0u);
  SpanStaging all(spans, sizeof(double), SIZE_MAX);
  ASSERT_EQ(all.regions().size(), 1u);
  EXPECT_EQ(all.regions()[0].count, 10u);
  all.gather();
  const auto* flat = reinterpret_cast<const double*>(all.regions()[0].data);
  EXPECT_EQ(flat[3], 1.0);
  EXPECT_EQ(flat[4], 2.0);
}

TEST(SpanStaging, NoSpansNoRegions) {
  SpanStaging staging({}, 4, 1024);
  EXPECT_TRUE(staging.regions().empty());
  EXPECT_EQ(staging.total_count(), 0u);
  staging.gather();
  staging.scatter();
}

}  // namespace
}  // namespace ft
