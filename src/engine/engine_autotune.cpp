// Bucket autotuning: one gradient engine per candidate over stand-in tensors, fed every gradient in
// backward order as the training step does, timed from the first submit to the end of finish().
#include "engine/engine_autotune.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "runtime/collective_timing.h"
#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {
namespace {

double time_candidate(Backend& backend, const World& world, const std::vector<NamedTensor>& stand_ins,
                      const std::vector<at::Tensor>& grads, const GradientEngineOptions& options, int iterations) {
  GradientEngine engine(backend, world, stand_ins, options, /*install_hooks=*/false);
  return median_over_ranks_s(world, 1, iterations, [&] {
    engine.prepare(true);
    for (std::size_t t = grads.size(); t-- > 0;) engine.submit(t, grads[t]);
    engine.finish();
    engine.wait_transfers();  // NCCL returns once enqueued: time the transfers, not their launch
  });
}

}  // namespace

std::vector<BucketSizes> default_bucket_candidates() {
  std::vector<BucketSizes> candidates;
  for (double bucket : {4.0, 12.0, 25.0, 64.0})
    for (double first : {1.0, 4.0})
      if (first <= bucket) candidates.push_back({bucket, first});
  return candidates;
}

AutotuneResult autotune_buckets(Backend& backend, const World& world, const std::vector<NamedTensor>& parameters,
                                GradientEngineOptions options, const std::vector<BucketSizes>& candidates,
                                int iterations) {
  FT_REQUIRE(!candidates.empty() && iterations > 0, "bucket autotuning needs candidates and iterations");
  // Zeros keep every sum finite (no overflow, no subnormals) however often they are reduced.
  std::vector<NamedTensor> stand_ins;
  std::vector<at::Tensor> grads;
  for (const NamedTensor& p : parameters) {
    stand_ins.push_back({p.name, at::zeros_like(p.tensor).detach()});
    grads.push_back(at::zeros_like(p.tensor).detach());
  }
  options.average = false;
  options.timeline = nullptr;
  options.reduce_alone = true;  // candidates are timed as the machinery runs them, whatever the world size
  AutotuneResult result;
  for (const BucketSizes& sizes : candidates) {
    options.bucket_mib = sizes.bucket_mib;
    options.first_bucket_mib = sizes.first_bucket_mib;
    result.trials.push_back({sizes, time_candidate(backend, world, stand_ins, grads, options, iterations)});
  }
  const auto best = std::min_element(result.trials.begin(), result.trials.end(),
                                     [](const BucketTrial& a, const BucketTrial& b) { return a.seconds < b.seconds; });
  result.best = best->sizes;
  return result;
}

void apply_autotuned_buckets(Backend& backend, const World& world, const std::vector<NamedTensor>& parameters,
                             GradientEngineOptions& options) {
  if (world.size() == 1) {  // one rank reduces nothing (GradientEngineOptions::reduce_alone): nothing to tune
    std::printf("bucket autotune: one rank, no all-reduce: bucket sizes kept (%g/%g MiB)\n", options.bucket_mib,
                options.first_bucket_mib);
    std::fflush(stdout);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const AutotuneResult result = autotune_buckets(backend, world, parameters, options);
  options.bucket_mib = result.best.bucket_mib;
  options.first_bucket_mib = result.best.first_bucket_mib;
  if (world.rank() != 0) return;
  std::string trials;
  for (const BucketTrial& trial : result.trials)
    trials += cat(trials.empty() ? "" : ", ", trial.sizes.bucket_mib, "/", trial.sizes.first_bucket_mib, " MiB ",
                  trial.seconds * 1e3, " ms");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("bucket autotune (%.1f s; bucket/first: fused all-reduce time): %s\n"
              "autotuned_bucket_mib=%g autotuned_first_bucket_mib=%g\n",
              took, trials.c_str(), options.bucket_mib, options.first_bucket_mib);
  std::fflush(stdout);
}

}  // namespace ft
