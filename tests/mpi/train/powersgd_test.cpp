// PowerSGD across real ranks: the gradient engine's buckets reduced by the compressor over MPI and Gloo equal the
// algebra computed here from every rank's gradients (each rank can draw all of them), with the bytes it counts;
// a run stopped and resumed continues the same compression; and the per-rank error feedback of a checkpoint
// written by half the ranks reaches every rank of the whole world as the saved ranks' mean.
#include <gtest/gtest.h>
#include <mpi.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include <csignal>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/resume.h"
#include "comm/backend.h"
#include "engine/engine.h"
#include "engine/powersgd.h"
#include "host_backends.h"
#include "runtime/signals.h"
#include "train/trainer.h"
#include "test_paths.h"
#include "train_fixture.h"

namespace ft::test {
namespace {

std::vector<NamedTensor> parameters() {
  const auto f64 = at::TensorOptions().dtype(at::kDouble).requires_grad(true);
  return {{"conv.weight", at::zeros({16, 8, 3, 3}, f64)}, {"conv.bias", at::zeros({16}, f64)},
          {"fc.weight", at::zeros({10, 64}, f64)}, {"fc.bias", at::zeros({10}, f64)}};
}

// Rank r's gradients of step `step`, the same draw on every rank.
std::vector<at::Tensor> gradients_of(const std::vector<NamedTensor>& params, int r, int step) {
  at::manual_seed(1000 * step + r);
  std::vector<at::Tensor> out;
  for (const auto& p : params) out.push_back(at::randn(p.tensor.sizes(), at::kDouble));
  return out;
}

double difference(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

// Three steps through the engine on `backend`: after each, every gradient equals the reference (P P^T mean(M) for
// a compressed matrix, the plain mean otherwise) and this rank's error feedback M - P P^T mean(M).
void check_engine(const World& world, Backend& backend, double bucket_mib) {
  const int n = world.size();
  auto params = parameters();
  GradientEngineOptions options;
  options.average = false;
  options.bucket_mib = options.first_bucket_mib = options.last_bucket_mib = bucket_mib;
  auto compressor = std::make_shared<PowerSgd>(params, n, PowerSgdOptions{2, 0, 3});
  options.reducer = compressor;
  GradientEngine engine(backend, world, params, options, /*install_hooks=*/false);
  std::vector<std::vector<at::Tensor>> errors(n);
  for (int r = 0; r < n; ++r)
    for (std::size_t i = 0; i < params.size(); ++i)
      errors[r].push_back(compressor->compressed(i) ? at::zeros_like(compressor->error(i)) : at::Tensor());
  for (int step = 0; step < 3; ++step) {
    std::vector<at::Tensor> q_before;
    for (std::size_t i = 0; i < params.size(); ++i)
      q_before.push_back(compressor->compressed(i) ? compressor->q(i).clone() : at::Tensor());
    std::vector<std::vector<at::Tensor>> grads;
    for (int r = 0; r < n; ++r) grads.push_back(gradients_of(params, r, step));
    compressor->set_step(step);
    engine.clear_gradients();
    engine.prepare(true);
    for (std::size_t i = 0; i < params.size(); ++i) engine.submit(i, grads[world.rank()][i] / n);
    engine.finish();
    for (std::size_t i = 0; i < params.size(); ++i) {
      at::Tensor mean = at::zeros_like(grads[0][i]);
      for (int r = 0; r < n; ++r) mean += grads[r][i] / n;
      if (!compressor->compressed(i)) {
        EXPECT_LT(difference(params[i].tensor.grad(), mean), 1e-12) << params[i].name;
        continue;
      }
      const at::Tensor q = std::get<0>(at::linalg_qr(q_before[i]));
      std::vector<at::Tensor> m;
      at::Tensor p = at::zeros({errors[0][i].size(0), q.size(1)}, at::kDouble), mean_m = at::zeros_like(errors[0][i]);
      for (int r = 0; r < n; ++r) {
        m.push_back(grads[r][i].reshape(errors[r][i].sizes()) + errors[r][i]);
        p += m.back().mm(q);
        mean_m += m.back() / n;
      }
      p = std::get<0>(at::linalg_qr(p));
      const at::Tensor approximation = p.mm(p.t()).mm(mean_m);
      EXPECT_LT(difference(params[i].tensor.grad().reshape(approximation.sizes()), approximation), 1e-12)
          << params[i].name << ", step " << step;
      for (int r = 0; r < n; ++r) errors[r][i] = m[r] - approximation;
      EXPECT_LT(difference(compressor->error(i), errors[world.rank()][i]), 1e-12) << "error feedback, step " << step;
    }
  }
  // Bytes on the wire per step: per bucket the vectors, the status and every P [n, k]; then every Q [m, k].
  std::int64_t elements = 0;
  for (const auto& bucket : engine.buckets()) {
    elements += 1;
    for (std::size_t i : bucket.tensors)
      elements += compressor->compressed(i) ? (compressor->error(i).size(0) + compressor->q(i).size(0)) * 2
                                            : params[i].tensor.numel();
  }
  EXPECT_EQ(engine.stats().bytes, 3 * elements * 8);
}

TEST(PowerSgdEngine, BucketsReduceToTheAlgebraOnEveryRank) {
  const World& world = ft::test::world();
  if (world.size() == 1) GTEST_SKIP() << "one rank has nothing to reduce";
  for (const std::string& kind : host_backends()) {
    BackendOptions options;
    options.name = choice_from<BackendName>("backend", kind);
    auto backend = make_backend(world, options);
    SCOPED_TRACE(kind);
    check_engine(world, *backend, 1e-4);  // every tensor in a bucket of its own
    check_engine(world, *backend, 1.0);   // all four in one bucket
  }
}

// A network of two linear layers for the checkpoint's model part.
struct TinyNet : Network {
  TinyNet() : fc(register_module("fc", torch::nn::Linear(4, 3))) {}
  at::Tensor forward(const at::Tensor& x) override { return fc->forward(x); }
  torch::nn::Linear fc;
};

// Rank r's error feedback of the saving run: distinct per rank.
std::vector<at::Tensor> own_state(int r) { return {at::full({3, 5}, 1.0 + r), at::arange(6, at::kFloat) * (r + 1)}; }

// Saves on the first `saving` ranks (a world of their own), then every rank of `world` resumes: rank r keeps its
// saved state when the number of ranks is the same, else each gets the saved ranks' mean.
void save_then_resume(const World& world, int saving, const std::string& path) {
  MPI_Comm sub = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(world.comm(), world.rank() < saving ? 0 : MPI_UNDEFINED, world.rank(), &sub), MPI_SUCCESS);
  world.barrier();  // every rank is done reading the file of a call before
  if (world.rank() == 0) remove_checkpoints(path);
  world.barrier();
  if (sub != MPI_COMM_NULL) {
    World part(sub);
    TinyNet net;
    torch::optim::SGD sgd(net.parameters(), torch::optim::SGDOptions(0.1));
    LossScaler scaler(false, 1, 1, at::kCPU);
    Resume resume(path, "fingerprint", part,
                  CheckpointedState{net, sgd, scaler, at::kCPU, {}, 1, {}, own_state(part.rank())}, {}, {});
    TrainingPosition position;
    SegmentRecord segment;
    segment.world_size = saving;
    position.segments = {segment};
    resume.save(position);
    MPI_Comm_free(&sub);
  }
  world.barrier();
  TinyNet net;
  torch::optim::SGD sgd(net.parameters(), torch::optim::SGDOptions(0.1));
  LossScaler scaler(false, 1, 1, at::kCPU);
  std::vector<at::Tensor> own{at::zeros({3, 5}), at::zeros({6})};
  Resume resume(path, "fingerprint", world, CheckpointedState{net, sgd, scaler, at::kCPU, {}, 1, {}, own}, {},
                {path, {}});
  resume.start();
  for (std::size_t i = 0; i < own.size(); ++i) {
    at::Tensor expected = at::zeros_like(own[i]);
    for (int r = 0; r < saving; ++r) expected += own_state(r)[i] / saving;
    if (saving == world.size()) expected = own_state(world.rank())[i];
    EXPECT_LT(difference(own[i], expected), 1e-6) << "tensor " << i << " on rank " << world.rank() << " of "
                                                  << world.size() << ", saved by " << saving;
  }
}

TEST(PowerSgdCheckpoint, ElasticResumeGivesEveryRankTheMeanOfTheSavedRanks) {
  const World& world = ft::test::world();
  const std::string path = test::temp_dir() + "/powersgd-elastic.ckpt";
  save_then_resume(world, world.size(), path);  // the same ranks: each its own
  if (world.size() > 1) save_then_resume(world, (world.size() + 1) / 2, path);  // 2 -> 4, 1 -> 2, 2 -> 3
  world.barrier();
  if (world.rank() == 0) remove_checkpoints(path);
}

Config powersgd_config(const std::string& data) {
  Config c = small_config(data, "mpi");
  c.data.shuffle = Shuffle::local;
  c.train.epochs = 2;
  c.distributed.compression = Compression::powersgd;
  c.distributed.powersgd_rank = 1;
  c.distributed.powersgd_start_step = 1;  // the first step plain, compressed from the second on
  c.distributed.verify_replicas = 1;
  return c;
}

// Stopped after its first compressed step and resumed on as many ranks, a run ends with the uninterrupted run's
// weights, bit for bit: Q and every rank's error feedback came back from the checkpoint.
TEST(PowerSgdCheckpoint, StoppedRunContinuesTheSameCompression) {
  const World& world = ft::test::world();
  const Config c = powersgd_config(synthetic_shards("powersgd_resume", 96, 2));
  auto backend = make_backend(world, BackendOptions{});
  Trainer straight(c, world, *backend, at::Device(at::kCPU));
  straight.run();
  TrainerOptions options;
  options.checkpoint_path = test::temp_dir() + "/powersgd-resume.ckpt";
  if (world.rank() == 0) remove_checkpoints(options.checkpoint_path);
  world.barrier();
  install_stop_handlers();
  for (int stops = 0; stops < 2; ++stops) {  // after the plain step, then after the first compressed one
    std::raise(SIGUSR1);
    Trainer part(c, world, *backend, at::Device(at::kCPU), options);
    EXPECT_THROW(part.run(), Interrupted);
    clear_stop_request();
  }
  Trainer resumed(c, world, *backend, at::Device(at::kCPU), options);
  resumed.run();
  const auto a = straight.network()->parameters(), b = resumed.network()->parameters();
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i])) << "parameter " << i;
  world.barrier();
  if (world.rank() == 0) remove_checkpoints(options.checkpoint_path);
}

}  // namespace
}  // namespace ft::test
