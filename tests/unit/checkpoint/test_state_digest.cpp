// Tests of checkpoint/state_digest.cpp against SHA-256 digests computed outside it (Python's hashlib over the
// little-endian bytes, in the comments): tensors in logical order, the network's state, the optimizer's state.
#include "checkpoint/state_digest.h"

#include <gtest/gtest.h>

#include "checkpoint/model_file.h"
#include "optim/optimizer.h"
#include "tiny_network.h"

namespace ft {
namespace {

// hashlib.sha256(b"").hexdigest()
constexpr const char* kNothing = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

TEST(StateDigest, HashesEachTensorsValuesInOrder) {
  // hashlib.sha256(struct.pack("<2f", 1, 2) + struct.pack("<q", 3)).hexdigest()
  EXPECT_EQ(tensors_digest({at::tensor({1.0f, 2.0f}), at::Tensor(), at::tensor({std::int64_t{3}})}),
            "c1714b091ed963edb856b0ecc7c59035274732918dce871164a06a86056c6e5f");
  // A transposed view hashes its logical order: hashlib.sha256(struct.pack("<4f", 1, 3, 2, 4)).hexdigest()
  EXPECT_EQ(tensors_digest({at::tensor({1.0f, 2.0f, 3.0f, 4.0f}).reshape({2, 2}).t()}),
            "e3016490e6a9ec8d5797c7b5ec17a4746720e71e73e9b14b0b705307e13275c1");
  EXPECT_EQ(tensors_digest({}), kNothing);
}

TEST(StateDigest, TheNetworksAndTheOptimizersStateAreHashed) {
  at::manual_seed(0);
  auto net = test::tiny_network();
  std::vector<at::Tensor> values;
  for (const auto& [name, t] : model_state(*net)) values.push_back(t);
  EXPECT_EQ(weights_digest(*net), tensors_digest(values));

  std::vector<at::Tensor> parameters = net->parameters();
  OptimizerConfig sgd;
  sgd.momentum = 0.9;
  auto optimizer = make_optimizer(sgd, parameters);
  EXPECT_EQ(optimizer_digest(*optimizer), kNothing) << "no state before the first step";
  const auto step = [&] {
    test::tiny_step(*net, *optimizer);
    return optimizer_digest(*optimizer);
  };
  const std::string first = step(), second = step();
  EXPECT_NE(first, kNothing) << "the momentum buffers are hashed";
  EXPECT_NE(first, second) << "the momentum buffers changed";
}

}  // namespace
}  // namespace ft
