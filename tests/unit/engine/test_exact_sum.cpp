// Exact sums: the scale's exponent keeps any order of the terms inside int64, the sum of the same rows in
// another order (as another split over ranks adds them) is the same bits, and it is within the fixed point's
// resolution of the float64 sum.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/exact_sum.h"
#include "runtime/error.h"
#include "test_world.h"

namespace ft {
namespace {

TEST(ExactSum, ExponentKeepsEveryOrderInsideInt64) {
  EXPECT_EQ(exact_sum_exponent(1.0, 4), 59);  // 1 < 2^1, 4 terms = 2^2: 4 x 1 x 2^59 = 2^61 < 2^62
  EXPECT_EQ(exact_sum_exponent(0.75, 3), 60);
  EXPECT_EQ(exact_sum_exponent(0.0, 8), 0);
  for (double max : {1e-30, 3.7e-3, 1.0, 12345.0, 3e30})
    for (std::int64_t terms : {1, 2, 3, 4, 7, 8, 64}) {
      const double scaled = max * static_cast<double>(terms) * std::ldexp(1.0, exact_sum_exponent(max, terms));
      EXPECT_LT(scaled, std::ldexp(1.0, 62)) << max << " x " << terms;
      EXPECT_GE(scaled, std::ldexp(1.0, 60)) << max << " x " << terms << ": resolution thrown away";
    }
  EXPECT_THROW(exact_sum_exponent(INFINITY, 4), Error);
}

at::Tensor sum_of(const std::vector<at::Tensor>& rows, const std::vector<std::int64_t>& segments) {
  ExactSum sum(segments, static_cast<int>(rows.size()), static_cast<int>(rows.size()), at::TensorOptions());
  for (std::size_t r = 0; r < rows.size(); ++r) sum.row(static_cast<int>(r)).copy_(rows[r]);
  return sum.sum(test::world());
}

TEST(ExactSum, AnyOrderGivesTheSameBits) {
  at::manual_seed(9);
  const std::vector<std::int64_t> segments = {100, 7, 1};
  std::vector<at::Tensor> rows;
  for (int r = 0; r < 4; ++r) rows.push_back(at::randn({108}) * std::pow(10.0, r - 2));
  const at::Tensor forward = sum_of(rows, segments);
  const at::Tensor shuffled = sum_of({rows[2], rows[0], rows[3], rows[1]}, segments);
  EXPECT_TRUE(at::equal(forward, shuffled)) << "the exact sum depends on the order of its terms";
  // A float sum does depend on it (the reason for the fixed point), and the exact sum is within its rounding.
  const at::Tensor plain = rows[0].to(at::kDouble) + rows[1] + rows[2] + rows[3];
  EXPECT_TRUE(at::allclose(forward, plain, 1e-12, 1e-12));
}

TEST(ExactSum, ZeroSegmentsAndTinyValuesSurvive) {
  const std::vector<std::int64_t> segments = {3, 2};
  const at::Tensor a = at::tensor({0.0f, 0.0f, 0.0f, 1e-30f, 2e-30f});
  const at::Tensor b = at::tensor({0.0f, 0.0f, 0.0f, 3e-30f, -1e-30f});
  const at::Tensor total = sum_of({a, b}, segments);
  EXPECT_TRUE(at::equal(total.narrow(0, 0, 3), at::zeros({3}, at::kDouble)));
  // 2^-98 and smaller: the scale follows the segment's own magnitude, so nothing is lost to fixed point.
  const at::Tensor exact = a.to(at::kDouble) + b.to(at::kDouble);
  EXPECT_EQ(total[3].item<double>(), exact[3].item<double>());
  EXPECT_EQ(total[4].item<double>(), exact[4].item<double>());
}

}  // namespace
}  // namespace ft
