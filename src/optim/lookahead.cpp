// Lookahead: a slow copy of the weights that trails the trained ones and is pulled in every k steps;
// all ranks hold identical weights, so every rank applies the same pulls without communicating.
#include "optim/lookahead.h"

#include <ATen/core/grad_mode.h>

#include <cmath>

#include "runtime/error.h"

namespace ft {

Lookahead::Lookahead(const std::vector<at::Tensor>& tensors, int every, std::int64_t total_steps)
    : every_(every), total_steps_(total_steps) {
  FT_CHECK(every > 0 && total_steps > 0, "lookahead needs positive step counts, got every ", every, " of ",
           total_steps);
  at::NoGradGuard no_grad;
  for (const auto& t : tensors) {
    if (!at::isFloatingType(t.scalar_type())) continue;
    // The tensor itself, not a detached alias: loading a checkpoint may give a parameter new storage.
    weights_.push_back(t);
    slow_.push_back(t.detach().clone());
  }
}

double Lookahead::decay(std::int64_t step, std::int64_t total_steps) {
  const double progress = static_cast<double>(step) / static_cast<double>(total_steps);
  return std::pow(0.95, 5) * progress * progress * progress;
}

void Lookahead::after_step(std::int64_t step) {
  if (step % every_ == 0) pull(decay(step, total_steps_));
}

void Lookahead::finish() { pull(1.0); }

// Two multi-tensor launches per dtype on a GPU, not two per tensor.
void Lookahead::pull(double d) {
  at::NoGradGuard no_grad;
  if (weights_.empty()) return;
  at::_foreach_lerp_(slow_, weights_, 1.0 - d);
  at::_foreach_copy_(weights_, slow_);
}

}  // namespace ft
