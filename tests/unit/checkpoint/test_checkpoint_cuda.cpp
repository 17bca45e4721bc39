// A checkpoint of a GPU run carries the CUDA generator's state (skipped without a GPU): the random numbers
// drawn on the device after a resume are those the uninterrupted run drew.
#include <gtest/gtest.h>

#include <ATen/Context.h>

#include "config/fingerprint.h"
#include "models/network.h"
#include "checkpoint/checkpoint.h"
#include "optim/optimizer.h"
#include "optim/precision.h"
#include "optim/rank_streams.h"
#include "test_paths.h"

namespace ft {
namespace {

TEST(CheckpointCuda, TheCudaGeneratorResumesWhereItStopped) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  const at::Device gpu(at::kCUDA, 0);
  Config config;
  auto net = make_network(config.model, InputShape{1, 28, 28, 10});
  net->to(gpu);
  auto optimizer = make_optimizer(config.optimizer, net->parameters());
  LossScaler scaler(false, 1.0, 100, gpu);
  seed_rank_streams(7, 0);
  (void)at::rand({5}, at::TensorOptions().device(gpu));  // the stream has moved on before the save
  const std::string path = ft::test::temp_dir() + "/cuda-generator.ckpt";
  save_checkpoint(path, run_fingerprint(config), *net, *optimizer, scaler, TrainingPosition{}, gpu);
  const at::Tensor straight = at::rand({64}, at::TensorOptions().device(gpu));
  (void)at::rand({1000}, at::TensorOptions().device(gpu));  // drawn on, as a run would be before it stops
  load_checkpoint(path, run_fingerprint(config), *net, *optimizer, scaler, gpu, {}, 0, 7);
  const at::Tensor resumed = at::rand({64}, at::TensorOptions().device(gpu));
  EXPECT_TRUE(at::equal(straight, resumed)) << "the CUDA generator did not resume at the saved state";
}

}  // namespace
}  // namespace ft
