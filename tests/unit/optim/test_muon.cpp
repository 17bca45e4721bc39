// Tests of Muon against its arithmetic written out here in float64: the Newton-Schulz iteration on wide, tall,
// zero and batched matrices, and whole optimizer steps (per-tensor and fused, skipped, scaled, at device rates).
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "optim/fused_step.h"
#include "optim/muon.h"
#include "optim/optimizer.h"

namespace ft::muon_test {
namespace {

// The quintic iteration as airbench94_muon writes it, in float64, one matrix at a time.
at::Tensor iteration_written_out(const at::Tensor& g, int steps) {
  at::Tensor x = g.to(at::kDouble);
  x = x / (std::sqrt(x.square().sum().item<double>()) + 1e-7);
  const bool tall = x.size(0) > x.size(1);
  if (tall) x = x.t();
  for (int i = 0; i < steps; ++i) {
    const at::Tensor a = at::mm(x, x.t());
    const at::Tensor b = -4.7750 * a + 2.0315 * at::mm(a, a);
    x = 3.4445 * x + at::mm(b, x);
  }
  return tall ? x.t() : x;
}

NewtonSchulz in(at::ScalarType dtype, int steps) {
  NewtonSchulz ns;
  ns.dtype = dtype;
  ns.steps = steps;
  return ns;
}

double max_difference(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

TEST(NewtonSchulz, MatchesTheIterationWrittenOutOnWideTallAndSquareMatrices) {
  at::manual_seed(5);
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{4, 9}, {9, 4}, {6, 6}, {1, 5}, {5, 1}, {64, 576}}) {
    for (int steps : {1, 3, 5}) {
      SCOPED_TRACE(std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + ", " + std::to_string(steps) + " steps");
      const at::Tensor g = at::randn(shape, at::kDouble) * 0.01;
      const at::Tensor want = iteration_written_out(g, steps);
      EXPECT_LT(max_difference(newton_schulz(g, in(at::kDouble, steps)), want), 1e-12);
      EXPECT_LT(max_difference(newton_schulz(g, in(at::kFloat, steps)), want), 2e-5);
      // bf16 keeps 8 bits: the reference's own arithmetic, within a few of its steps' rounding
      EXPECT_LT(max_difference(newton_schulz(g, in(at::kBFloat16, steps)), want), 0.06);
    }
  }
}

TEST(NewtonSchulz, AZeroUpdateStaysZero) {
  for (at::ScalarType type : {at::kDouble, at::kFloat, at::kBFloat16}) {
    const at::Tensor out = newton_schulz(at::zeros({2, 3, 5}, type), in(type, 5));
    EXPECT_TRUE(at::equal(out, at::zeros_like(out))) << type;
  }
}

TEST(NewtonSchulz, ABatchIsEachMatrixAlone) {
  at::manual_seed(6);
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{3, 5, 7}, {2, 7, 5}}) {
    const at::Tensor g = at::randn(shape, at::kDouble);
    const at::Tensor batched = newton_schulz(g, in(at::kDouble, 3));
    ASSERT_EQ(batched.sizes(), g.sizes());
    for (std::int64_t b = 0; b < g.size(0); ++b)
      EXPECT_LT(max_difference(batched[b], iteration_written_out(g[b], 3)), 1e-12) << "matrix " << b;
  }
}

// What the iteration is for: the update's singular vectors kept, its singular values pushed near 1 (the
// reference's docstring: roughly uniform in [0.5, 1.5] rather than exactly 1).
TEST(NewtonSchulz, FiveStepsBringEverySingularValueNearOne) {
  at::manual_seed(7);
  const at::Tensor g = at::randn({32, 288}, at::kDouble) * at::linspace(0.2, 3.0, 288, at::kDouble);
  const at::Tensor s = at::linalg_svdvals(newton_schulz(g, in(at::kDouble, 5)));
  EXPECT_GT(s.min().item<double>(), 0.5);
  EXPECT_LT(s.max().item<double>(), 1.5);
  EXPECT_LT(at::linalg_svdvals(g).max().item<double>() / at::linalg_svdvals(g).min().item<double>(), 1e3);
}

// A model's parameters as Muon sees them: two filters of one shape (one batch), a filter of another shape, a
// tall 1x1 filter (more outputs than inputs), a bias and a head, in float64.
struct Model {
  std::vector<std::pair<std::string, at::Tensor>> named;
  std::vector<at::Tensor> all() const {
    std::vector<at::Tensor> out;
    for (const auto& [name, t] : named) out.push_back(t);
    return out;
  }
};

Model model(std::uint64_t seed) {
  at::manual_seed(seed);
  Model m;
  const std::vector<std::pair<std::string, std::vector<std::int64_t>>> shapes = {
      {"a.weight", {4, 3, 3, 3}}, {"b.weight", {4, 3, 3, 3}}, {"c.weight", {6, 4, 3, 3}},
      {"d.weight", {20, 2, 1, 1}}, {"norm.bias", {4}},         {"fc.weight", {3, 6}}};
  for (const auto& [name, shape] : shapes) m.named.emplace_back(name, at::randn(shape, at::kDouble).requires_grad_(true));
  return m;
}

OptimizerConfig muon_config() {
  OptimizerConfig c;
  c.name = OptimizerName::muon;
  c.lr = 0.5;
  c.momentum = 0.85;
  c.nesterov = true;
  c.weight_decay = 0.01;
  c.muon_lr = 0.24;
  c.muon_momentum = 0.6;
  c.muon_ns_steps = 3;
  return c;
}

// The step written out: Muon for 4-d parameters as airbench94_muon orders it, LibTorch's SGD for the rest.
struct Reference {
  OptimizerConfig c;
  std::map<std::string, at::Tensor> weights, buffers;

  void step(const std::map<std::string, at::Tensor>& grads, double schedule) {
    for (auto& [name, w] : weights) {
      const at::Tensor& g = grads.at(name);
      const bool filter = w.dim() == 4;
      const double momentum = filter ? c.muon_momentum : c.momentum;
      const at::Tensor d = filter ? g : g + c.weight_decay * w;
      at::Tensor& buf = buffers[name];
      buf = buf.defined() ? momentum * buf + d : d.clone();
      const at::Tensor update = c.nesterov ? d + momentum * buf : buf;
      if (!filter) {
        w = w - c.lr * schedule * update;
        continue;
      }
      w = w * std::sqrt(static_cast<double>(w.size(0))) / std::sqrt(w.square().sum().item<double>());
      w = w - c.muon_lr * schedule * iteration_written_out(update.reshape({w.size(0), -1}), c.muon_ns_steps).view(w.sizes());
    }
  }
};

struct Trainee {
  Model m;
  std::vector<ParameterGroup> groups;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<FusedStep> fused;
};

Trainee run_of(const OptimizerConfig& c, bool fused) {
  Trainee r{model(3), {}, nullptr, nullptr};
  r.groups = group_parameters(r.m.named, {}, c);
  r.optimizer = make_optimizer(c, r.groups);
  OptimizerConfig f = c;
  f.implementation = fused ? OptimizerImplementation::fused : OptimizerImplementation::per_tensor;
  r.fused = FusedStep::make(*r.optimizer, f, at::kCPU);
  return r;
}

Reference reference_of(const OptimizerConfig& c) {
  Reference ref{c, {}, {}};
  for (const auto& [name, t] : model(3).named) ref.weights[name] = t.detach().clone();
  return ref;
}

// The step's gradients, in double on the CPU whatever device the model is on (the reference steps there).
std::map<std::string, at::Tensor> gradients(const Model& m, int step) {
  at::manual_seed(100 + step);
  std::map<std::string, at::Tensor> grads;
  for (const auto& [name, t] : m.named) grads[name] = at::randn(t.sizes(), at::kDouble) * 0.1;
  return grads;
}

void give(Trainee& r, const std::map<std::string, at::Tensor>& grads, double scale = 1.0) {
  for (auto& [name, t] : r.m.named) t.mutable_grad() = grads.at(name) * scale;
}

void expect_like(const Trainee& r, const Reference& ref, const std::string& when, double bound = 1e-10) {
  for (const auto& [name, t] : r.m.named)
    EXPECT_LT(max_difference(t.detach(), ref.weights.at(name)), bound) << when << ": " << name;
}

class MuonSteps : public ::testing::TestWithParam<bool> {};  // fused or per-tensor

TEST_P(MuonSteps, EqualTheStepWrittenOut) {
  const OptimizerConfig c = muon_config();
  Trainee r = run_of(c, GetParam());
  ASSERT_EQ(static_cast<bool>(r.fused), GetParam());
  Reference ref = reference_of(c);
  for (int step = 1; step <= 4; ++step) {
    const auto grads = gradients(r.m, step);
    give(r, grads);
    if (r.fused)
      r.fused->step();
    else
      r.optimizer->step();
    ref.step(grads, 1.0);
    expect_like(r, ref, "step " + std::to_string(step));
  }
}

// Scaled gradients with their scale given (fp16 weights keep them scaled) step as the true ones.
TEST_P(MuonSteps, ScaledGradientsWithTheirScaleStepAsTheTrueOnes) {
  if (!GetParam()) GTEST_SKIP() << "the scale is the fused step's argument";
  const OptimizerConfig c = muon_config();
  Trainee r = run_of(c, true);
  Reference ref = reference_of(c);
  for (int step = 1; step <= 3; ++step) {
    const auto grads = gradients(r.m, step);
    give(r, grads, 1024.0);
    r.fused->step({}, at::full({1}, 1024.0, at::kFloat));
    ref.step(grads, 1.0);
    expect_like(r, ref, "step " + std::to_string(step));
  }
}

// A filter without a gradient (none reached it this step) is left exactly as it is, not even rescaled, and the
// others step as if it were not there.
TEST_P(MuonSteps, AFilterWithoutAGradientIsLeftAlone) {
  const OptimizerConfig c = muon_config();
  Trainee r = run_of(c, GetParam());
  Reference ref = reference_of(c);
  const at::Tensor untouched = ref.weights.at("b.weight").clone();
  auto grads = gradients(r.m, 1);
  give(r, grads);
  r.m.named[1].second.mutable_grad() = at::Tensor();  // b.weight
  if (r.fused)
    r.fused->step();
  else
    r.optimizer->step();
  ref.weights.erase("b.weight");
  ref.step(grads, 1.0);
  ref.weights["b.weight"] = untouched;
  expect_like(r, ref, "one step without b.weight's gradient");
  EXPECT_TRUE(at::equal(r.m.named[1].second.detach(), untouched));
}

INSTANTIATE_TEST_SUITE_P(Muon, MuonSteps, ::testing::Values(true, false),
                         [](const auto& info) { return std::string(info.param ? "Fused" : "PerTensor"); });

// A skip decided on the device leaves weights and momentum as they were (inf gradients included); the next step
// matches a run that never saw the skipped one.
TEST(MuonFused, ASkippedStepChangesNothing) {
  const OptimizerConfig c = muon_config();
  Trainee r = run_of(c, true);
  Reference ref = reference_of(c);
  auto grads = gradients(r.m, 1);
  give(r, grads);
  r.fused->step(at::zeros({1}));
  ref.step(grads, 1.0);
  std::map<std::string, at::Tensor> before;
  for (const auto& [name, t] : r.m.named) before[name] = t.detach().clone();
  for (auto& [name, t] : r.m.named) t.mutable_grad() = at::full_like(t, INFINITY);
  r.fused->step(at::ones({1}));
  for (const auto& [name, t] : r.m.named) EXPECT_TRUE(at::equal(t.detach(), before[name])) << name;
  grads = gradients(r.m, 2);
  give(r, grads);
  r.fused->step(at::zeros({1}));
  ref.step(grads, 1.0);
  expect_like(r, ref, "after the skipped step");
}

// Rates read from tensors (a captured step's) follow the schedule in both the filters' and the SGD groups.
TEST(MuonFused, DeviceRatesFollowTheSchedule) {
  const OptimizerConfig c = muon_config();
  Trainee r = run_of(c, true);
  Reference ref = reference_of(c);
  r.fused->use_device_rates();
  for (int step = 1; step <= 3; ++step) {
    const double schedule = 1.0 / step;
    set_learning_rate(*r.optimizer, r.groups, c.lr * schedule, 1);
    r.fused->load_rates();
    const auto grads = gradients(r.m, step);
    give(r, grads);
    r.fused->step();
    ref.step(grads, schedule);
    expect_like(r, ref, "step " + std::to_string(step));
  }
}

TEST(MuonGroups, FiltersMoveToAnOrthogonalGroupAtTheMuonRate) {
  const OptimizerConfig c = muon_config();
  Model m = model(1);
  m.named.emplace_back("frozen.weight", at::zeros({2, 2, 3, 3}, at::kDouble));  // not trainable: in no group
  const std::map<std::string, ParameterRule> rules = {{"norm.bias", {4.0, 0, false}}};
  const auto groups = group_parameters(m.named, rules, c);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_FALSE(groups[0].orthogonal);  // fc.weight
  ASSERT_EQ(groups[0].parameters.size(), 1u);
  EXPECT_TRUE(groups[0].parameters[0].is_same(m.named[5].second));
  EXPECT_FALSE(groups[1].orthogonal);  // norm.bias and its rule
  EXPECT_DOUBLE_EQ(groups[1].rule.lr_scale, 4.0);
  EXPECT_TRUE(groups[2].orthogonal);
  EXPECT_EQ(groups[2].parameters.size(), 4u);
  EXPECT_DOUBLE_EQ(groups[2].rule.lr_scale, 0.24 / 0.5);
  auto optimizer = make_optimizer(c, groups);
  ASSERT_TRUE(dynamic_cast<Muon*>(optimizer.get()));
  const auto options = [&](std::size_t g) {
    return static_cast<const torch::optim::SGDOptions&>(optimizer->param_groups()[g].options());
  };
  EXPECT_DOUBLE_EQ(options(2).lr(), 0.24);
  EXPECT_DOUBLE_EQ(options(2).momentum(), 0.6);
  EXPECT_DOUBLE_EQ(options(2).weight_decay(), 0.0);
  EXPECT_DOUBLE_EQ(options(1).lr(), 2.0);
  EXPECT_DOUBLE_EQ(options(1).momentum(), 0.85);
  EXPECT_DOUBLE_EQ(options(1).weight_decay(), 0.01 / 4.0);
  // Other optimizers leave the filters where the rules put them.
  OptimizerConfig sgd = c;
  sgd.name = OptimizerName::sgd;
  EXPECT_EQ(group_parameters(m.named, rules, sgd).size(), 2u);
}

// On a GPU: the fused step's Newton-Schulz iteration in bf16 (the reference's own precision) on float32 and on
// fp16 weights with their gradients kept scaled, against the step written out in float64; then a skip.
TEST(MuonCuda, StepsLikeTheStepWrittenOutWithinBf16) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  for (at::ScalarType type : {at::kFloat, at::kHalf}) {
    SCOPED_TRACE(c10::toString(type));
    const OptimizerConfig c = muon_config();
    Trainee r = run_of(c, true);
    for (auto& [name, t] : r.m.named) t = t.detach().to(at::kCUDA, type).requires_grad_(true);
    r.groups = group_parameters(r.m.named, {}, c);
    r.optimizer = make_optimizer(c, r.groups);
    OptimizerConfig f = c;
    f.implementation = OptimizerImplementation::fused;
    r.fused = FusedStep::make(*r.optimizer, f, at::Device(at::kCUDA, 0));
    Reference ref = reference_of(c);
    for (auto& [name, w] : ref.weights) w = w.to(type).to(at::kDouble);  // the weights the run starts from
    const double scale = type == at::kHalf ? 1024.0 : 1.0;
    for (int step = 1; step <= 3; ++step) {
      auto grads = gradients(r.m, step);
      for (auto& [name, g] : grads) g = g.to(type).to(at::kDouble);
      for (auto& [name, t] : r.m.named) t.mutable_grad() = (grads.at(name) * scale).to(at::kCUDA, type);
      r.fused->step(at::zeros({1}, at::TensorOptions().device(at::kCUDA)),
                    type == at::kHalf ? at::full({1}, scale, at::TensorOptions().device(at::kCUDA)) : at::Tensor());
      ref.step(grads, 1.0);
    }
    for (const auto& [name, t] : r.m.named)
      EXPECT_LT(max_difference(t.detach().cpu(), ref.weights.at(name)), 0.05) << name;
    const auto before = r.m.named[0].second.detach().clone();
    for (auto& [name, t] : r.m.named) t.mutable_grad() = at::full_like(t, INFINITY);
    r.fused->step(at::ones({1}, at::TensorOptions().device(at::kCUDA)));
    EXPECT_TRUE(at::equal(r.m.named[0].second.detach(), before)) << "a skipped step moved a filter";
  }
}

}  // namespace
}  // namespace ft::muon_test
