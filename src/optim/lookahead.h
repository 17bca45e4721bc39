// Lookahead towards slow weights, as in the fast CIFAR-10 recipes: every k optimizer steps the slow copy
// moves towards the trained weights and the trained weights are reset to it; the slow copy ends the run.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace ft {

class Lookahead {
 public:
  // `tensors`: the floating-point parameters and buffers to average (others are ignored); `every`: steps
  // between pulls (> 0); `total_steps`: the optimizer steps of the whole run, which set the decay schedule.
  Lookahead(const std::vector<at::Tensor>& tensors, int every, std::int64_t total_steps);

  // After optimizer step `step` (counting from 1): on every k-th step slow = d*slow + (1-d)*weights and
  // weights = slow, with d = 0.95^5 * (step / total_steps)^3 (so early pulls barely hold training back).
  void after_step(std::int64_t step);
  // The end of training: the weights become the slow copy.
  void finish();
  // The slow copy, for checkpoints (restored in place).
  const std::vector<at::Tensor>& slow() const { return slow_; }

  static double decay(std::int64_t step, std::int64_t total_steps);

 private:
  void pull(double decay);
  std::vector<at::Tensor> weights_, slow_;
  int every_;
  std::int64_t total_steps_;
};

}  // namespace ft
