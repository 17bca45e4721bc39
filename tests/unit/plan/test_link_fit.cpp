// Tests of plan/link_fit.cpp: times made by hand from a known alpha and beta, each size by the algorithm the
// backend runs at it, give those two back; no latency to fit gives alpha 0; bad sweeps are refused by name.
#include "plan/link_fit.h"

#include <gtest/gtest.h>

#include <string>

#include "runtime/error.h"

namespace ft {
namespace {

std::string fit_error(const std::vector<SweepSample>& samples, int ranks) {
  try {
    fit_level(samples, ranks, LinkModel{});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LinkFit, RecoversAlphaAndBetaAcrossTheAlgorithmSwitch) {
  LinkModel model;
  model.ring_min_bytes = 1 << 20;
  std::vector<SweepSample> samples;
  // 2 ranks: recursive doubling below 1 MiB (alpha + n beta), the ring from it (2 alpha + n beta).
  for (double bytes = 4096; bytes <= 16 << 20; bytes *= 4) {
    const double steps = bytes >= model.ring_min_bytes ? 2 : 1;
    samples.push_back({bytes, steps * 50e-6 + bytes * 8e-9});
  }
  const LinkLevel fit = fit_level(samples, 2, model);
  EXPECT_NEAR(fit.alpha_s, 50e-6, 1e-12);
  EXPECT_NEAR(fit.beta_s_per_byte, 8e-9, 1e-17);
}

TEST(LinkFit, EachAlgorithmItsOwnLatency) {
  // MPI_Iallreduce below 1 MiB waits 5 ms a step (a rendezvous), the ring from 1 MiB 50 us: 2 ranks at 1 ns a byte.
  LinkModel model;
  model.ring_min_bytes = 1 << 20;
  std::vector<SweepSample> samples;
  for (double bytes = 4096; bytes < 1 << 20; bytes *= 4) samples.push_back({bytes, 5e-3 + bytes * 1e-9});
  for (double bytes = 1 << 20; bytes <= 64 << 20; bytes *= 4) samples.push_back({bytes, 2 * 50e-6 + bytes * 1e-9});
  const LinkLevel fit = fit_level(samples, 2, model);
  EXPECT_NEAR(fit.beta_s_per_byte, 1e-9, 1e-18);
  EXPECT_NEAR(fit.alpha_s, 50e-6, 1e-12);
  EXPECT_NEAR(fit.small_alpha_s, 5e-3, 1e-12);
  EXPECT_NEAR(level_allreduce_s(2, 4096, fit, model), 5e-3 + 4096e-9, 1e-12);
  EXPECT_NEAR(level_allreduce_s(2, 1 << 20, fit, model), 100e-6 + 1048576e-9, 1e-12);
}

TEST(LinkFit, FourRanksOfTheRing) {
  std::vector<SweepSample> samples;
  for (double bytes : {1e4, 1e5, 1e6, 1e7}) samples.push_back({bytes, 6 * 2e-3 + 1.5 * bytes * 1e-8});
  const LinkLevel fit = fit_level(samples, 4, LinkModel{});
  EXPECT_NEAR(fit.alpha_s, 2e-3, 1e-12);
  EXPECT_NEAR(fit.beta_s_per_byte, 1e-8, 1e-18);
}

TEST(LinkFit, SmallMessagesFasterThanTheRateBendNeitherTerm) {
  // As a shaped link measures: 4 KiB to 64 KiB leave at once (socket buffers, the shaper's burst), from 256 KiB
  // the ring at 100 Mbit/s (80 ns a byte) plus 2 x 1 ms. Beta comes from 1 MiB up; alpha from 4 KiB to 256 KiB
  // is the median of (0, 0, 0, 1 ms): 0 where time is below beta's share.
  LinkModel model;
  std::vector<SweepSample> samples{{4096, 2e-5}, {16384, 7e-5}, {65536, 1e-4}};
  for (double bytes = 262144; bytes <= 16 << 20; bytes *= 4) samples.push_back({bytes, 2e-3 + bytes * 80e-9});
  const LinkLevel fit = fit_level(samples, 2, model);
  EXPECT_NEAR(fit.beta_s_per_byte, 80e-9, 1e-15);
  EXPECT_EQ(fit.alpha_s, 0);
  // Without them, alpha is the latency of the rest.
  samples.erase(samples.begin(), samples.begin() + 3);
  samples.push_back({262144 * 2, 2e-3 + 524288 * 80e-9});
  EXPECT_NEAR(fit_level(samples, 2, model).alpha_s, 1e-3, 1e-12);
}

TEST(LinkFit, NoLatencyToFitGivesAlphaZero) {
  // Times below pure bandwidth at small sizes would need a negative alpha: it stays at zero.
  std::vector<SweepSample> samples{{1e3, 0.5e-6}, {1e6, 1e-3}, {1e7, 1e-2}};
  const LinkLevel fit = fit_level(samples, 2, LinkModel{});
  EXPECT_GE(fit.alpha_s, 0);
  EXPECT_NEAR(fit.alpha_s, 0, 1e-12);
  EXPECT_NEAR(fit.beta_s_per_byte, 1e-9, 1e-12);
}

TEST(LinkFit, RefusesSweepsItCannotFit) {
  EXPECT_NE(fit_error({{1e6, 1e-3}, {1e6, 1.1e-3}}, 2).find("at least 2 message sizes"), std::string::npos);
  EXPECT_NE(fit_error({{1e6, 0}, {1e7, 1e-2}}, 2).find("must be positive"), std::string::npos);
  EXPECT_NE(fit_error({{1e3, 1e-2}, {1e7, 1e-3}}, 2).find("do not grow with the message size"), std::string::npos);
  EXPECT_NE(fit_error({{1e3, 1e-3}, {1e7, 1e-2}}, 1).find("at least 2 ranks"), std::string::npos);
}

}  // namespace
}  // namespace ft
