// The gradient engine: autograd hooks hand each gradient to its fusion bucket as backward produces it,
// and a communication thread all-reduces complete buckets in plan order while backward continues.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/backend.h"
#include "comm/bucket_plan.h"
#include "config/schema.h"
#include "engine/bucket_reducer.h"

namespace ft {

class World;
class Timeline;
class CollectiveOrder;
struct BucketDeviceSync;

struct NamedTensor {
  std::string name;
  at::Tensor tensor;
};

struct GradientEngineOptions {
  double bucket_mib = DistributedConfig{}.bucket_mib;
  double first_bucket_mib = DistributedConfig{}.first_bucket_mib;
  double last_bucket_mib = DistributedConfig{}.last_bucket_mib;
  // The all-reduce's wire type: at::kHalf or at::kBFloat16 converts each bucket to it (half the bytes);
  // at::kFloat (the default) sends the gradients as they are.
  at::ScalarType wire = at::kFloat;
  // true: gradients are divided by the world size while packing (the result is the mean);
  // false: the caller already scaled them (e.g. the loss by 1/world), the all-reduce only sums.
  bool average = true;
  double stall_timeout_s = 60;   // bound on waiting for the communication thread
  // CPU parameters with a backend that reduces scattered host memory (MPI, Gloo): a bucket is reduced
  // where autograd left its gradients, with no copy into a fusion buffer. false: always pack.
  bool in_place = true;
  // A world of one rank has nothing to reduce: the engine leaves autograd's gradients where they are (no
  // hooks, no thread, no copy). true packs and calls the backend all the same (tests of the machinery).
  bool reduce_alone = false;
  // Reduces each packed bucket in place of its one all-reduce (PowerSGD); null: the plain all-reduce. Buckets
  // are then always packed, in the gradients' own dtype (not with an fp16/bf16 wire).
  std::shared_ptr<BucketReducer> reducer;
  Timeline* timeline = nullptr;
  // With a second communicator on the device (synchronised BatchNorm over NCCL): each bucket takes its place
  // in line on the thread that makes it ready (autograd's), and is enqueued in its turn. Null: no order.
  CollectiveOrder* order = nullptr;
};

// On the CPU host clocks time the collectives; on a GPU device events do (a host clock around an
// enqueued transfer would time its launch): allreduce_s is then the transfers' device time and wait_s the
// compute stream's wait for them after backward ended.
struct EngineStats {
  double wait_s = 0;        // main thread blocked in finish() for communication (exposed)
  double allreduce_s = 0;   // communication thread inside collectives
  std::int64_t buckets = 0; // collectives issued
  std::int64_t bytes = 0;   // bytes all-reduced (wire format)
  std::int64_t untimed_steps = 0;  // device clocks only: steps that ended before their events were recorded

  // The share of allreduce_s that ran while the main thread computed (0 without all-reduces).
  double hidden_fraction() const {
    return allreduce_s > 0 ? std::clamp(1 - wait_s / allreduce_s, 0.0, 1.0) : 0.0;
  }
};

class GradientEngine {
 public:
  // Negotiates the tensor list with all ranks (collective over world) and plans the buckets.
  // Throws ft::Error naming the tensor and ranks when ranks disagree.
  GradientEngine(Backend& backend, const World& world, std::vector<NamedTensor> parameters,
                 const GradientEngineOptions& options, bool install_hooks = true);
  ~GradientEngine();
  GradientEngine(const GradientEngine&) = delete;
  GradientEngine& operator=(const GradientEngine&) = delete;

  // Drops every parameter's gradient (set to none) before a new optimizer step. After finish() the
  // gradients may be views of the fusion buffers, which must not be detached or zeroed in place.
  void clear_gradients();
  // Before a micro-batch's backward: sync=false accumulates locally (no communication).
  void prepare(bool sync);
  // Called by the hooks once a parameter's .grad holds its complete (accumulated) gradient; public so
  // benchmarks can feed gradients without autograd. In place, `grad` itself is reduced and must stay
  // untouched until finish().
  void submit(std::size_t index, const at::Tensor& grad);
  // After the synchronising backward: completes buckets, waits for their all-reduce, and leaves the
  // reduced gradients in each parameter's .grad. Rethrows the first communication error.
  void finish();
  // Whether buckets are reduced in place (see GradientEngineOptions::in_place).
  bool in_place() const { return in_place_; }
  // Whether this engine leaves gradients alone (one rank, see GradientEngineOptions::reduce_alone).
  bool solo() const { return solo_; }
  // After finish(): blocks until the backend's collectives still in flight on the device (NCCL) have
  // completed. The communication thread waits for them: it is the only thread that drives the backend's
  // in-flight transfers, so a stall is detected, and the communicator aborted, by one thread alone.
  void wait_transfers();

  const std::vector<BucketSpec>& buckets() const { return plan_; }
  const std::vector<TensorSpec>& tensors() const { return specs_; }
  // The statistics so far; on a device, of the steps whose events have completed (all of them after a
  // device synchronisation).
  EngineStats stats();

 private:
  bool compressed() const { return options_.wire != at::kFloat; }
  struct BucketState;
  void communication_loop();
  void watch_in_flight(std::unique_lock<std::mutex>& lock, bool wait);
  bool missing_anywhere(const std::vector<std::string>& missing_here);
  void run_bucket(std::size_t b);
  void complete_missing();
  void warm_up_transfers();
  // Under mutex_: a place in line (options_.order) for each bucket of the plan's ready prefix without one.
  void place_ready_buckets();
  void raise_missing(const std::vector<std::string>& missing_here);
  at::Tensor status(std::size_t b) const;  // the bucket's missing-gradient count, reduced with it

  Backend& backend_;
  const World& world_;
  GradientEngineOptions options_;
  DType wire_dtype_ = DType::kFloat32;  // the all-reduce's element type when compressed()
  std::vector<NamedTensor> params_;
  std::vector<TensorSpec> specs_;
  std::vector<BucketSpec> plan_;
  std::vector<std::size_t> bucket_of_;    // tensor index -> bucket
  std::vector<std::size_t> slot_of_;      // tensor index -> position within its bucket
  std::vector<std::unique_ptr<BucketState>> state_;
  std::unique_ptr<BucketDeviceSync> device_;
  bool in_place_ = false;
  bool solo_ = false;
  bool on_device_ = false;  // parameters on a GPU
  double prescale_;
  at::Tensor prescale_tensor_;

  std::mutex mutex_;
  std::condition_variable cv_;
  bool sync_ = false;
  bool stop_ = false;
  bool drain_ = false;         // wait_transfers() asks the communication thread to wait for the device
  std::size_t next_ = 0;       // next bucket the communication thread launches
  std::size_t placed_ = 0;     // buckets of this step with a place in options_.order (a prefix of the plan)
  std::size_t finished_ = 0;   // buckets whose all-reduce completed this step
  std::int64_t step_ = 0;
  std::exception_ptr error_;
  EngineStats stats_;
  std::thread thread_;
};

}  // namespace ft
