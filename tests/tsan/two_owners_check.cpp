// ThreadSanitizer's self-check for the engine's thread tests: the pattern the engine gave up (the main
// thread waiting on a backend's transfers while the communication thread polls them) is reported as a race.
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include "engine/engine.h"
#include "engine/in_flight_backends.h"
#include "test_world.h"

namespace ft {
namespace {

// Disabled in plain runs, as it races by design; the tsan.detects_two_owners case runs it and expects
// ThreadSanitizer's report. The main thread's wait blocks while the engine's thread polls every 50 ms.
TEST(TsanSelfCheck, DISABLED_MainThreadWaitingBesideTheCommunicationThreadIsARace) {
  test::CommunicatorBackend backend(/*wait_ms=*/150);
  torch::nn::Linear layer(16, 8);
  std::vector<NamedTensor> params;
  for (auto& p : layer->named_parameters()) params.push_back({p.key(), p.value()});
  GradientEngineOptions options;
  options.reduce_alone = true;
  GradientEngine engine(backend, test::world(), params, options, /*install_hooks=*/false);
  std::vector<at::Tensor> grads;
  for (auto& p : layer->parameters()) grads.push_back(at::ones_like(p));
  for (int step = 0; step < 3; ++step) {
    engine.prepare(true);
    for (std::size_t t = grads.size(); t-- > 0;) engine.submit(t, grads[t]);
    engine.finish();
    backend.wait_in_flight();  // a second owner
  }
  EXPECT_GT(backend.touches_by_maker(), 0);
}

}  // namespace
}  // namespace ft
