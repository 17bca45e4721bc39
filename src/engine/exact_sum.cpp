// Fixed-point sums: the scale of a segment comes from the all-reduced maximum of its magnitudes (exact and
// order-free), values are scaled by a power of two in float64 (exact) and rounded half to even, and the
// int64 sums cross ranks through the world's own all-reduce.
#include "engine/exact_sum.h"

#include <cmath>

#include "comm/stall_inspector.h"
#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {

int exact_sum_exponent(double max, std::int64_t terms) {
  if (!(max > 0)) return 0;
  FT_REQUIRE(std::isfinite(max), "distributed.reproducible: a non-finite value in an exact sum (", max, ")");
  int magnitude = 0;
  std::frexp(max, &magnitude);  // max < 2^magnitude
  int growth = 0;
  while ((std::int64_t{1} << growth) < terms) ++growth;  // terms <= 2^growth
  return 62 - magnitude - growth;
}

ExactSum::ExactSum(std::vector<std::int64_t> segments, int rows, int terms, const at::TensorOptions& options)
    : segments_(std::move(segments)), terms_(terms) {
  for (std::int64_t n : segments_) width_ += n;
  FT_CHECK(rows >= 1 && terms >= rows, "exact sum of ", rows, " rows of ", terms);
  rows_ = at::zeros({rows, width_}, options);
}

at::Tensor ExactSum::sum(const World& world) {
  const std::int64_t count = static_cast<std::int64_t>(segments_.size());
  std::vector<at::Tensor> maxima;
  std::int64_t offset = 0;
  for (std::int64_t n : segments_) {
    maxima.push_back(rows_.narrow(1, offset, n).abs().amax());
    offset += n;
  }
  at::Tensor host_max = at::stack(maxima).to(at::kCPU, at::kDouble).contiguous();
  {
    const CollectiveLabel label("exact-sum scales");
    world.allreduce_max(host_max.data_ptr<double>(), static_cast<int>(count));
  }
  std::vector<double> scale(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    scale[i] = std::ldexp(1.0, exact_sum_exponent(host_max.data_ptr<double>()[i], terms_));
  const auto options = rows_.options().dtype(at::kDouble);
  const at::Tensor scales =
      at::repeat_interleave(at::tensor(scale, options), at::tensor(segments_, options.dtype(at::kLong)));
  at::Tensor integers = (rows_.to(at::kDouble) * scales).round().to(at::kLong).sum(0).to(at::kCPU).contiguous();
  {
    const CollectiveLabel label("exact sums");
    world.allreduce_sum(integers.data_ptr<std::int64_t>(), static_cast<int>(width_));
  }
  return integers.to(rows_.device()).to(at::kDouble) / scales;
}

}  // namespace ft
