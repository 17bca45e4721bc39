// The two-parameter weighted least squares of link_fit.h: every sample contributes its algorithm's alpha and
// beta coefficients, weighted by 1 / time, and the 2 x 2 normal equations are solved directly.
#include "plan/link_fit.h"

#include <cmath>
#include <set>

#include "runtime/error.h"

namespace ft {
namespace {

// The coefficients of alpha and beta in the time of one all-reduce of `bytes` on `ranks` ranks.
void coefficients(int ranks, double bytes, const LinkModel& link, double& a, double& b) {
  const LinkLevel unit_alpha{1, 0}, unit_beta{0, 1};
  a = level_allreduce_s(ranks, bytes, unit_alpha, link);
  b = level_allreduce_s(ranks, bytes, unit_beta, link);
}

}  // namespace

LinkLevel fit_level(const std::vector<SweepSample>& samples, int ranks, const LinkModel& link) {
  FT_REQUIRE(ranks >= 2, "a link sweep needs at least 2 ranks, not ", ranks);
  std::set<double> sizes;
  for (const auto& s : samples) {
    FT_REQUIRE(s.bytes > 0 && s.seconds > 0, "a link sweep sample of ", s.bytes, " bytes took ", s.seconds,
               " s: sizes and times must be positive");
    sizes.insert(s.bytes);
  }
  FT_REQUIRE(sizes.size() >= 2, "a link sweep needs at least 2 message sizes to fit alpha and beta, got ",
             sizes.size());
  double saa = 0, sab = 0, sbb = 0, sat = 0, sbt = 0;  // sums of the weighted normal equations
  for (const auto& s : samples) {
    double a = 0, b = 0;
    coefficients(ranks, s.bytes, link, a, b);
    const double w = 1 / (s.seconds * s.seconds);
    saa += w * a * a, sab += w * a * b, sbb += w * b * b, sat += w * a * s.seconds, sbt += w * b * s.seconds;
  }
  LinkLevel fit;
  const double det = saa * sbb - sab * sab;
  if (det > 0) {
    fit.alpha_s = (sat * sbb - sbt * sab) / det;
    fit.beta_s_per_byte = (saa * sbt - sab * sat) / det;
  }
  if (det <= 0 || fit.alpha_s < 0) fit = {0, sbt / sbb};  // no latency term the data can support
  FT_REQUIRE(fit.beta_s_per_byte > 0 && std::isfinite(fit.beta_s_per_byte),
             "the link sweep's times do not grow with the message size (fitted beta ", fit.beta_s_per_byte,
             " s/byte): measure sizes up to several MiB");
  return fit;
}

}  // namespace ft
