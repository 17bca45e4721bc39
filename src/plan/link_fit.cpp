// The two-regime fit of link_fit.h: beta from the larger sizes, where bandwidth dominates, by least squares with
// a free intercept; each algorithm's alpha from its smaller sizes, the median of what each time leaves after
// beta's share. Small messages that finish sooner than the link's rate allows (socket buffers, a shaper's burst)
// then cannot bend beta, nor MPI_Iallreduce's rendezvous the ring's latency, nor noise on large sizes alpha.
#include "plan/link_fit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "runtime/collective_timing.h"
#include "runtime/error.h"

namespace ft {
namespace {

// The coefficients of alpha and beta in the time of the sample's all-reduce on `ranks` ranks.
void coefficients(int ranks, const SweepSample& s, double& a, double& b) {
  const LinkLevel unit_alpha{1, 0}, unit_beta{0, 1};
  a = s.ring ? ring_allreduce_s(ranks, s.bytes, unit_alpha) : doubling_allreduce_s(ranks, s.bytes, unit_alpha);
  b = s.ring ? ring_allreduce_s(ranks, s.bytes, unit_beta) : doubling_allreduce_s(ranks, s.bytes, unit_beta);
}

// The sizes from which a half of `samples` begins (`upper`) or up to which it reaches; all with fewer than 4.
double half_bound(const std::vector<SweepSample>& samples, bool upper) {
  std::set<double> distinct;
  for (const auto& s : samples) distinct.insert(s.bytes);
  const std::vector<double> sizes(distinct.begin(), distinct.end());
  if (sizes.size() < 4) return upper ? sizes.front() : sizes.back();
  return upper ? sizes[sizes.size() / 2] : sizes[(sizes.size() - 1) / 2];
}

// Least squares of time = a alpha + b beta over the samples from `from` bytes; returns beta (0 when undetermined).
double bandwidth_term(const std::vector<SweepSample>& samples, int ranks, double from) {
  double saa = 0, sab = 0, sbb = 0, sat = 0, sbt = 0;
  for (const auto& s : samples) {
    if (s.bytes < from) continue;
    double a = 0, b = 0;
    coefficients(ranks, s, a, b);
    saa += a * a, sab += a * b, sbb += b * b, sat += a * s.seconds, sbt += b * s.seconds;
  }
  const double det = saa * sbb - sab * sab;
  return det > 0 ? (saa * sbt - sab * sat) / det : 0;
}

// The median latency per step of the samples up to `to` bytes, given beta; -1 when there are none.
double latency_term(const std::vector<SweepSample>& samples, int ranks, double beta, double to) {
  std::vector<double> latencies;
  for (const auto& s : samples) {
    if (s.bytes > to) continue;
    double a = 0, b = 0;
    coefficients(ranks, s, a, b);
    latencies.push_back(std::max(0.0, (s.seconds - b * beta) / a));
  }
  return latencies.empty() ? -1 : median(latencies);
}

// The busy CPU per byte sent over the samples from `from` bytes whose CPU was measured; 0 when none was.
double cpu_term(const std::vector<SweepSample>& samples, int ranks, double from) {
  double cpu = 0, sent = 0;
  for (const auto& s : samples) {
    if (s.bytes < from || s.cpu_s < 0) continue;
    double a = 0, b = 0;
    coefficients(ranks, s, a, b);
    cpu += s.cpu_s, sent += ranks * b;
  }
  return sent > 0 ? cpu / sent : 0;
}

}  // namespace

LinkLevel fit_level(const std::vector<SweepSample>& samples, int ranks, int cores) {
  FT_REQUIRE(ranks >= 2, "a link sweep needs at least 2 ranks, not ", ranks);
  std::set<double> sizes;
  std::vector<SweepSample> ring, doubling;
  for (const auto& s : samples) {
    FT_REQUIRE(s.bytes > 0 && s.seconds > 0, "a link sweep sample of ", s.bytes, " bytes took ", s.seconds,
               " s: sizes and times must be positive");
    sizes.insert(s.bytes);
    (s.ring ? ring : doubling).push_back(s);
  }
  FT_REQUIRE(sizes.size() >= 2, "a link sweep needs at least 2 message sizes to fit alpha and beta, got ",
             sizes.size());
  const std::vector<SweepSample>& wide = ring.empty() ? doubling : ring;
  LinkLevel fit;
  fit.beta_s_per_byte = bandwidth_term(wide, ranks, half_bound(wide, true));
  FT_REQUIRE(fit.beta_s_per_byte > 0 && std::isfinite(fit.beta_s_per_byte),
             "the link sweep's times do not grow with the message size (fitted beta ", fit.beta_s_per_byte,
             " s/byte): measure sizes up to several MiB");
  const double ring_alpha =
      ring.empty() ? -1 : latency_term(ring, ranks, fit.beta_s_per_byte, half_bound(ring, false));
  const double small_alpha = doubling.empty() ? -1 : latency_term(doubling, ranks, fit.beta_s_per_byte, HUGE_VAL);
  fit.alpha_s = ring_alpha >= 0 ? ring_alpha : small_alpha;
  fit.small_alpha_s = small_alpha >= 0 ? small_alpha : ring_alpha;
  fit.cpu_s_per_byte = cpu_term(wide, ranks, half_bound(wide, true));
  fit.cpu_cores = fit.cpu_s_per_byte > 0 ? cores : 0;
  return fit;
}

}  // namespace ft
