// train.cuda_graphs: a training step's static buffers, its eager warm-up steps, one capture and the replays
// after it, and the one gradient buffer its backward writes into (all-reduced after it on several ranks).
#pragma once

#include <ATen/ATen.h>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "device/cuda_graph.h"

namespace ft {

class Backend;

// What the body reads and writes: the batch in `x` and `y`; the batch's mean loss (float64) and correct
// count (int64) out. Their addresses do not change while the step lives, as a graph needs.
struct StepBuffers {
  at::Tensor x, y, loss, correct;
};

// Every parameter's gradient a view into one zeroed buffer of its type on `device` (with the parameter's own
// layout; float32, and float16 or bfloat16 for half weights): backward accumulates into memory made outside any
// graph, and several ranks all-reduce each buffer in one call. Construction throws, naming it, for a parameter
// of another type or device.
class GradientBuffer {
 public:
  GradientBuffer() = default;
  GradientBuffer(const std::vector<at::Tensor>& parameters, const at::Device& device);
  void zero() const;
  // How many of its all-reduces may be in flight at once: two keep the device fed while the host, which
  // enqueues them without waiting, stays close enough to hold them against the stall timeout.
  static constexpr std::size_t kInFlight = 2;

  // Sums the gradients over the ranks in place, on the current CUDA stream (where a replay runs), in one
  // call per buffer of a backend that takes device memory (NCCL), left in flight; first waits (against the
  // stall timeout) until fewer than kInFlight earlier steps' are.
  void allreduce(Backend& backend) const;
  const at::Tensor& tensor(at::ScalarType type = at::kFloat) const;

 private:
  std::map<at::ScalarType, at::Tensor> buffers_;
};

class GraphedStep {
 public:
  // Eager steps before the capture: cuDNN's algorithm search, the optimizer's state and lazy
  // initialisations happen in them, never inside the graph.
  static constexpr int kWarmupSteps = 3;
  using Body = std::function<void(const StepBuffers&)>;
  using RecordingFactory = std::function<std::unique_ptr<Recording>()>;

  // `record` makes the recording: a CUDA graph when empty, a test's stand-in otherwise. What the body writes besides
  // the outputs (gradients, optimizer state) must live outside the recording's memory, made before it.
  explicit GraphedStep(Body body, RecordingFactory record = {});

  // One step on this batch: copied into the static inputs, then the body run eagerly where the capture
  // will be (the first kWarmupSteps steps), captured and replayed (the next one), or replayed. The batch
  // keeps its shape.
  const StepBuffers& run(const at::Tensor& x, const at::Tensor& y);
  bool captured() const { return captured_; }
  // The replays so far, the capturing step's own included: steps - kWarmupSteps once captured.
  std::int64_t replays() const { return replays_; }

 private:
  void hold(const at::Tensor& x, const at::Tensor& y);

  Body body_;
  RecordingFactory record_;
  StepBuffers buffers_;
  int eager_steps_ = 0;
  bool captured_ = false;
  std::int64_t replays_ = 0;
  std::unique_ptr<Recording> recording_;  // made on the first step, warm-ups included
};

}  // namespace ft
