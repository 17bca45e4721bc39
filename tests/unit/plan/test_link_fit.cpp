// Tests of plan/link_fit.cpp: times made by hand from a known alpha and beta, each size by the algorithm it ran,
// give those back; small messages faster than the rate and noise on large sizes bend neither; bad sweeps are
// refused by name.
#include "plan/link_fit.h"

#include <gtest/gtest.h>

#include <string>

#include "runtime/error.h"

namespace ft {
namespace {

std::string fit_error(const std::vector<SweepSample>& samples, int ranks) {
  try {
    fit_level(samples, ranks);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LinkFit, RecoversAlphaAndBetaOfBothAlgorithms) {
  // 2 ranks at 8 ns a byte: the ring at every size (2 alpha + n beta, alpha 50 us), MPI_Iallreduce below 1 MiB
  // (small alpha + n beta, small alpha 5 ms: a rendezvous).
  std::vector<SweepSample> samples;
  for (double bytes = 4096; bytes <= 16 << 20; bytes *= 4) {
    samples.push_back({bytes, 2 * 50e-6 + bytes * 8e-9, true});
    if (bytes < 1 << 20) samples.push_back({bytes, 5e-3 + bytes * 8e-9, false});
  }
  const LinkLevel fit = fit_level(samples, 2);
  EXPECT_NEAR(fit.alpha_s, 50e-6, 1e-12);
  EXPECT_NEAR(fit.small_alpha_s, 5e-3, 1e-12);
  EXPECT_NEAR(fit.beta_s_per_byte, 8e-9, 1e-17);
  LinkModel model;
  model.ring_min_bytes = 1 << 20;
  EXPECT_NEAR(level_allreduce_s(2, 4096, fit, model), 5e-3 + 4096 * 8e-9, 1e-12);
  EXPECT_NEAR(level_allreduce_s(2, 1 << 20, fit, model), 100e-6 + 1048576 * 8e-9, 1e-12);
}

TEST(LinkFit, FourRanksOfTheRing) {
  std::vector<SweepSample> samples;
  for (double bytes : {1e4, 1e5, 1e6, 1e7}) samples.push_back({bytes, 6 * 2e-3 + 1.5 * bytes * 1e-8});
  const LinkLevel fit = fit_level(samples, 4);
  EXPECT_NEAR(fit.alpha_s, 2e-3, 1e-12);
  EXPECT_NEAR(fit.small_alpha_s, 2e-3, 1e-12);  // no MPI_Iallreduce measured: the ring's
  EXPECT_NEAR(fit.beta_s_per_byte, 1e-8, 1e-18);
}

TEST(LinkFit, DoublingAloneGivesBoth) {
  std::vector<SweepSample> samples;
  for (double bytes : {1e4, 1e5, 1e6, 1e7}) samples.push_back({bytes, 2 * (1e-4 + bytes * 1e-9), false});
  const LinkLevel fit = fit_level(samples, 4);
  EXPECT_NEAR(fit.alpha_s, 1e-4, 1e-12);
  EXPECT_NEAR(fit.small_alpha_s, 1e-4, 1e-12);
  EXPECT_NEAR(fit.beta_s_per_byte, 1e-9, 1e-18);
}

TEST(LinkFit, SmallMessagesAndLargeNoiseBendNeitherTerm) {
  // A shaped link: 4 KiB to 64 KiB leave at once (socket buffers, the shaper's burst); from 256 KiB 80 ns a byte
  // plus 2 x 1 ms, the 16 MiB size 5 ms late (noise, 0.4%). Beta from 256 KiB up, alpha from 4 KiB to 256 KiB:
  // the median of (0, 0, 0, about 1 ms), 0 where a time is below beta's share.
  std::vector<SweepSample> samples{{4096, 2e-5}, {16384, 7e-5}, {65536, 1e-4}};
  for (double bytes = 262144; bytes <= 16 << 20; bytes *= 4)
    samples.push_back({bytes, 2e-3 + bytes * 80e-9 + (bytes == 16 << 20 ? 5e-3 : 0)});
  const LinkLevel fit = fit_level(samples, 2);
  EXPECT_NEAR(fit.beta_s_per_byte, 80e-9, 1e-9);
  EXPECT_EQ(fit.alpha_s, 0);
  // Without the fast sizes, alpha is the latency of the smaller half: the noise on 16 MiB reaches it only through
  // beta (10% here), where a median over every size would take it whole.
  samples.erase(samples.begin(), samples.begin() + 3);
  samples.push_back({524288, 2e-3 + 524288 * 80e-9});
  EXPECT_NEAR(fit_level(samples, 2).alpha_s, 1e-3, 1.5e-4);
}

TEST(LinkFit, NoLatencyToFitGivesAlphaZero) {
  // Times below pure bandwidth at small sizes would need a negative alpha: it stays at zero.
  std::vector<SweepSample> samples{{1e3, 0.5e-6}, {1e6, 1e-3}, {1e7, 1e-2}};
  const LinkLevel fit = fit_level(samples, 2);
  EXPECT_GE(fit.alpha_s, 0);
  EXPECT_NEAR(fit.alpha_s, 0, 1e-12);
  EXPECT_NEAR(fit.beta_s_per_byte, 1e-9, 1e-12);
}

TEST(LinkFit, MachineCpuPerByteSentOverTheLargerHalf) {
  // 2 ranks, 7 sizes from 4 KiB: the larger half starts at the 4th (256 KiB). Each rank sends the buffer once;
  // the machine spends 3 ns per byte sent there. The smaller sizes' CPU (start-up, polling) must not count.
  std::vector<SweepSample> samples;
  for (double bytes = 4096; bytes <= 16 << 20; bytes *= 4)
    samples.push_back({bytes, 1e-4 + bytes * 8e-9, true, bytes >= 262144 ? 2 * bytes * 3e-9 : 1.0});
  LinkLevel fit = fit_level(samples, 2, 2);
  EXPECT_NEAR(fit.cpu_s_per_byte, 3e-9, 1e-18);
  EXPECT_EQ(fit.cpu_cores, 2);
  // A large size whose CPU was not counted is left out, not taken as none.
  samples.back().cpu_s = -1;
  EXPECT_NEAR(fit_level(samples, 2, 2).cpu_s_per_byte, 3e-9, 1e-18);
  // 4 ranks each send 2 x 3/4 of the buffer: 6 bytes a byte of buffer between them.
  std::vector<SweepSample> four;
  for (double bytes = 1 << 20; bytes <= 8 << 20; bytes *= 2)
    four.push_back({bytes, 6 * 1e-4 + 1.5 * bytes * 8e-9, true, 6 * bytes * 5e-9});
  EXPECT_NEAR(fit_level(four, 4, 16).cpu_s_per_byte, 5e-9, 1e-18);
  // Nothing counted: no cost, and no cores claimed for it.
  for (auto& s : samples) s.cpu_s = -1;
  fit = fit_level(samples, 2, 2);
  EXPECT_EQ(fit.cpu_s_per_byte, 0);
  EXPECT_EQ(fit.cpu_cores, 0);
  EXPECT_FALSE(fit.cpu_known());
}

TEST(LinkFit, RefusesSweepsItCannotFit) {
  EXPECT_NE(fit_error({{1e6, 1e-3}, {1e6, 1.1e-3}}, 2).find("at least 2 message sizes"), std::string::npos);
  EXPECT_NE(fit_error({{1e6, 0}, {1e7, 1e-2}}, 2).find("must be positive"), std::string::npos);
  EXPECT_NE(fit_error({{1e6, -1e-3}, {1e7, 1e-2}}, 2).find("must be positive"), std::string::npos);
  EXPECT_NE(fit_error({{0, 1e-3}, {1e7, 1e-2}}, 2).find("must be positive"), std::string::npos);
  EXPECT_NE(fit_error({{-4096, 1e-3}, {1e7, 1e-2}}, 2).find("must be positive"), std::string::npos);
  EXPECT_NE(fit_error({{1e3, 1e-2}, {1e7, 1e-3}}, 2).find("do not grow with the message size"), std::string::npos);
  EXPECT_NE(fit_error({{1e3, 1e-3}, {1e7, 1e-2}}, 1).find("at least 2 ranks"), std::string::npos);
}

}  // namespace
}  // namespace ft
