// PowerSGD's elements per bucket and the checks of a step profile before the model uses it.
#include "plan/step_profile.h"

#include <algorithm>

#include "runtime/error.h"

namespace ft {

std::int64_t StepProfile::elements() const {
  std::int64_t total = 0;
  for (const auto& b : buckets) total += b.elements;
  return total;
}

PowerSgdElements powersgd_elements(const ProfileBucket& bucket, int rank) {
  PowerSgdElements out;
  std::int64_t whole = 0;
  for (const auto& shape : bucket.shapes) {
    std::int64_t numel = 1;
    for (const std::int64_t d : shape) numel *= d;
    whole += numel;
    const std::int64_t n = shape.empty() ? 1 : shape[0], m = n > 0 ? numel / n : 0;
    const std::int64_t k = std::min<std::int64_t>({n, m, rank});
    if (shape.size() >= 2 && (n + m) * k * 2 < n * m) {
      out.first += n * k;
      out.second += m * k;
    } else {
      out.first += numel;
    }
  }
  if (out.second == 0) return {whole, 0};
  return out;
}

void check_profile(const StepProfile& p, const std::string& what) {
  FT_REQUIRE(p.batch > 0, what, ": batch must be positive, not ", p.batch);
  FT_REQUIRE(p.ranks > 0, what, ": ranks must be positive, not ", p.ranks);
  FT_REQUIRE(p.element_bytes > 0, what, ": element_bytes must be positive, not ", p.element_bytes);
  FT_REQUIRE(p.data_s >= 0 && p.forward_s >= 0 && p.backward_s > 0 && p.optimizer_s >= 0, what,
             ": phase times must not be negative and backward_s must be positive");
  for (std::size_t b = 0; b < p.buckets.size(); ++b) {
    const ProfileBucket& bucket = p.buckets[b];
    FT_REQUIRE(bucket.elements > 0, what, ": bucket ", b, " has ", bucket.elements, " elements");
    FT_REQUIRE(bucket.ready_s >= 0 && bucket.ready_s <= p.backward_s * (1 + 1e-9), what, ": bucket ", b,
               " is ready at ", bucket.ready_s, " s, outside backward (0 to ", p.backward_s, " s)");
    if (bucket.shapes.empty()) continue;
    std::int64_t numel = 0;
    for (const auto& shape : bucket.shapes) {
      std::int64_t n = 1;
      for (const std::int64_t d : shape) n *= d;
      numel += n;
    }
    FT_REQUIRE(numel == bucket.elements, what, ": bucket ", b, "'s shapes hold ", numel, " elements, not ",
               bucket.elements);
  }
}

}  // namespace ft
