// Observes the forward pass through ATen's RecordFunction callbacks (the mechanism behind the PyTorch
// profiler): the operations called at the top level, their tensor inputs and their outputs' shapes.
// Parameters are matched to operations by identity, so residual sums and functional calls show up too.
#include "models/model_summary.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <set>
#include <string>
#include <unordered_map>

#include "runtime/error.h"

namespace ft {
namespace {

struct ObservedOp {
  std::string name;
  std::vector<const c10::TensorImpl*> inputs;
  std::vector<std::int64_t> output_sizes;
};

// What the callbacks record; only the thread running summarize_network has one.
struct Observation {
  int depth = 0;  // nesting of recorded operations: only depth 0 (called by the model itself) counts
  std::vector<const c10::TensorImpl*> pending_inputs;
  std::vector<ObservedOp> ops;
};
thread_local Observation* observation = nullptr;

struct Mark : at::ObserverContext {};

void collect(const c10::IValue& value, std::vector<const c10::TensorImpl*>& out) {
  if (value.isTensor() && value.toTensor().defined()) out.push_back(value.toTensor().unsafeGetTensorImpl());
  if (value.isTensorList())
    for (const at::Tensor& t : value.toTensorVector())
      if (t.defined()) out.push_back(t.unsafeGetTensorImpl());
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  if (observation && observation->depth++ == 0) {
    observation->pending_inputs.clear();
    for (const auto& input : fn.inputs()) collect(input, observation->pending_inputs);
  }
  return std::make_unique<Mark>();
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  if (!observation || --observation->depth != 0) return;
  for (const auto& output : fn.outputs()) {
    if (!output.isTensor() || !output.toTensor().defined()) continue;
    std::string name = fn.name();
    const auto colons = name.rfind("::");
    if (colons != std::string::npos) name = name.substr(colons + 2);
    observation->ops.push_back({name, observation->pending_inputs, output.toTensor().sizes().vec()});
    return;
  }
}

// Registers the callbacks on this thread for its lifetime.
class Observer {
 public:
  explicit Observer(Observation& into)
      : handle_(at::addThreadLocalCallback(at::RecordFunctionCallback(on_start, on_end)
                                               .needsInputs(true)
                                               .needsOutputs(true)
                                               .scopes({at::RecordScope::FUNCTION}))) {
    observation = &into;
  }
  ~Observer() {
    observation = nullptr;
    at::removeCallback(handle_);
  }
  Observer(const Observer&) = delete;
  Observer& operator=(const Observer&) = delete;

 private:
  at::CallbackHandle handle_;
};

// "32x16x16": the sizes after the batch dimension.
std::string shape_text(const std::vector<std::int64_t>& sizes) {
  if (sizes.size() <= 1) return "1";
  std::string text;
  for (std::size_t i = 1; i < sizes.size(); ++i) text += (i > 1 ? "x" : "") + std::to_string(sizes[i]);
  return text;
}

}  // namespace

std::vector<ModelLayer> summarize_network(Network& network, const InputShape& input) {
  struct Owner {
    std::string module;
    std::int64_t count;
  };
  std::unordered_map<const c10::TensorImpl*, Owner> owners;
  std::int64_t total = 0;
  at::TensorOptions options(at::kFloat);
  for (const auto& item : network.named_parameters()) {
    const auto dot = item.key().rfind('.');
    owners[item.value().unsafeGetTensorImpl()] = {dot == std::string::npos ? item.key() : item.key().substr(0, dot),
                                                  item.value().numel()};
    total += item.value().numel();
    options = item.value().options().requires_grad(false);
  }
  Observation seen;
  const bool training = network.is_training();
  network.eval();
  {
    const at::NoGradGuard no_grad;
    const at::Tensor image = at::zeros({1, input.channels, input.height, input.width}, options);
    const Observer observer(seen);
    network.forward(image);
  }
  network.train(training);

  std::vector<ModelLayer> layers;
  std::set<const c10::TensorImpl*> counted;
  std::int64_t listed = 0;
  bool previous_owned = false;
  for (const auto& op : seen.ops) {
    ModelLayer layer{op.name, shape_text(op.output_sizes), 0};
    bool owned = false;
    for (const auto* tensor : op.inputs) {
      const auto owner = owners.find(tensor);
      if (owner == owners.end()) continue;
      layer.name = owner->second.module;
      owned = true;
      if (counted.insert(tensor).second) layer.parameters += owner->second.count;
    }
    listed += layer.parameters;
    // A module that runs as several operations in a row (e.g. a linear layer as transpose and matrix
    // product) is one layer with the last operation's output.
    if (owned && previous_owned && layers.back().name == layer.name) {
      layers.back().output_shape = layer.output_shape;
      layers.back().parameters += layer.parameters;
    } else {
      layers.push_back(layer);
    }
    previous_owned = owned;
  }
  if (listed < total) layers.push_back({"(parameters unused in forward)", "-", total - listed});
  return layers;
}

std::vector<ModelLayer> model_summary(const ModelConfig& config, const InputShape& input) {
  const auto network = make_network(config, input);
  return summarize_network(*network, input);
}

}  // namespace ft
