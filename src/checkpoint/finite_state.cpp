// Finite-state checks with one reduction per tensor and one read for all of them; the culprit is looked
// for only when something is wrong.
#include "checkpoint/finite_state.h"

#include "runtime/error.h"
#include "runtime/world.h"
#include "checkpoint/model_file.h"
#include "optim/optimizer.h"

namespace ft {

NamedTensors saved_state(Network& network, torch::optim::Optimizer* optimizer, const std::vector<at::Tensor>& extra) {
  NamedTensors state = model_state(network);
  if (optimizer)
    update_optimizer_state(*optimizer, [&](const std::string& name, const at::Tensor& t) {
      state.emplace_back("optimizer." + name, t);
      return t;
    });
  for (std::size_t i = 0; i < extra.size(); ++i) state.emplace_back(cat("extra.", i), extra[i]);
  return state;
}

std::string first_non_finite(const NamedTensors& state) {
  std::vector<at::Tensor> flags;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < state.size(); ++i) {
    const at::Tensor& t = state[i].second;
    if (!t.defined() || !t.is_floating_point() || t.numel() == 0) continue;
    flags.push_back(at::isfinite(t.detach()).all().to(at::kCPU, /*non_blocking=*/false));
    index.push_back(i);
  }
  if (flags.empty() || at::stack(flags).all().item<bool>()) return "";
  for (std::size_t k = 0; k < flags.size(); ++k)
    if (!flags[k].item<bool>()) return state[index[k]].first;
  return "";
}

void require_finite_state(const NamedTensors& state, const World& world, const std::string& what) {
  const std::string bad = first_non_finite(state);
  const double any = world.allreduce_max(bad.empty() ? 0.0 : 1.0);
  if (any == 0) return;
  throw SharedError(cat("non-finite values in ", bad.empty() ? std::string("another rank's state") : "'" + bad + "'",
                        ": ", what, " is not written and the last good one (if any) is kept; lower optimizer.lr, ",
                        "raise precision (fp32), or check the data"));
}

}  // namespace ft
