// The two-regime fit of link_fit.h: beta from the larger half of the sizes, where bandwidth dominates, by least
// squares with a free intercept; each algorithm's alpha from its smaller sizes, the median of what each time
// leaves after beta's share. Small messages that finish sooner than the link's rate allows (socket buffers, a
// shaper's burst) then cannot bend beta, nor MPI_Iallreduce's rendezvous the ring's latency.
#include "plan/link_fit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "runtime/collective_timing.h"
#include "runtime/error.h"

namespace ft {
namespace {

// The coefficients of alpha and beta in the time of one all-reduce of `bytes` on `ranks` ranks.
void coefficients(int ranks, double bytes, const LinkModel& link, double& a, double& b) {
  const LinkLevel unit_alpha{1, 0}, unit_beta{0, 1};
  a = level_allreduce_s(ranks, bytes, unit_alpha, link);
  b = level_allreduce_s(ranks, bytes, unit_beta, link);
}

// Least squares of time = a alpha + b beta over the samples; returns beta (0 when the sizes cannot tell it).
double bandwidth_term(const std::vector<SweepSample>& samples, int ranks, const LinkModel& link) {
  double saa = 0, sab = 0, sbb = 0, sat = 0, sbt = 0;
  for (const auto& s : samples) {
    double a = 0, b = 0;
    coefficients(ranks, s.bytes, link, a, b);
    saa += a * a, sab += a * b, sbb += b * b, sat += a * s.seconds, sbt += b * s.seconds;
  }
  const double det = saa * sbb - sab * sab;
  return det > 0 ? (saa * sbt - sab * sat) / det : 0;
}

}  // namespace

LinkLevel fit_level(const std::vector<SweepSample>& samples, int ranks, const LinkModel& link) {
  FT_REQUIRE(ranks >= 2, "a link sweep needs at least 2 ranks, not ", ranks);
  std::set<double> distinct;
  for (const auto& s : samples) {
    FT_REQUIRE(s.bytes > 0 && s.seconds > 0, "a link sweep sample of ", s.bytes, " bytes took ", s.seconds,
               " s: sizes and times must be positive");
    distinct.insert(s.bytes);
  }
  FT_REQUIRE(distinct.size() >= 2, "a link sweep needs at least 2 message sizes to fit alpha and beta, got ",
             distinct.size());
  const std::vector<double> sizes(distinct.begin(), distinct.end());
  // Four sizes or more: the larger half for beta, the smaller half for alpha; fewer: all of them for both.
  const bool split = sizes.size() >= 4;
  const double large_from = split ? sizes[sizes.size() / 2] : sizes.front();
  const double small_to = split ? sizes[(sizes.size() - 1) / 2] : sizes.back();
  std::vector<SweepSample> large;
  for (const auto& s : samples)
    if (s.bytes >= large_from) large.push_back(s);
  LinkLevel fit;
  fit.beta_s_per_byte = bandwidth_term(large, ranks, link);
  FT_REQUIRE(fit.beta_s_per_byte > 0 && std::isfinite(fit.beta_s_per_byte),
             "the link sweep's times do not grow with the message size (fitted beta ", fit.beta_s_per_byte,
             " s/byte): measure sizes up to several MiB");
  // Each sample's latency per step of its algorithm: the ring's from its smaller sizes where it ran any.
  std::vector<double> ring_small, ring_any, doubling;
  for (const auto& s : samples) {
    double a = 0, b = 0;
    coefficients(ranks, s.bytes, link, a, b);
    const double latency = std::max(0.0, (s.seconds - b * fit.beta_s_per_byte) / a);
    if (link.ring_min_bytes < 0 || s.bytes < link.ring_min_bytes) {
      doubling.push_back(latency);
      continue;
    }
    ring_any.push_back(latency);
    if (s.bytes <= small_to) ring_small.push_back(latency);
  }
  fit.alpha_s = median(!ring_small.empty() ? ring_small : !ring_any.empty() ? ring_any : doubling);
  fit.small_alpha_s = doubling.empty() ? fit.alpha_s : median(doubling);
  return fit;
}

}  // namespace ft
