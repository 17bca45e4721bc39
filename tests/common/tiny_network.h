// A network the checkpoint and digest tests build and step in milliseconds: simple_cnn on 8x8 grey images of
// 10 classes, and one optimizer step on a random batch of two (for what a state holds, not for learning).
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <memory>

#include "config/schema.h"
#include "models/network.h"

namespace ft::test {

inline std::shared_ptr<Network> tiny_network() {
  ModelConfig model;
  model.name = ModelName::simple_cnn;
  return make_network(model, InputShape{1, 8, 8, 10});
}

// One step of `optimizer` on the cross-entropy of a random batch (optimizers with state have it afterwards).
inline void tiny_step(Network& net, torch::optim::Optimizer& optimizer) {
  optimizer.zero_grad();
  at::cross_entropy_loss(net.forward(at::randn({2, 1, 8, 8})), at::tensor({1, 2}, at::kLong)).backward();
  optimizer.step();
}

}  // namespace ft::test
