// Gradient engine implementation: post-accumulation hooks that pack each gradient (pre-scaled by 1/world so
// fp16 sums cannot overflow) or, in place, just record it; in-order bucket launch on a communication
// thread; and a status element reduced with each bucket, so a rank skipping a parameter is an error.
#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "engine/engine_device.h"
#include "comm/collective_order.h"
#include "comm/stall_inspector.h"
#include "comm/timeline.h"
#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {

struct GradientEngine::BucketState {
  at::Tensor buffer;             // packed: numel + 1 (status element), on the parameters' device
  at::Tensor wire;               // fp16 copy when compressing
  std::vector<at::Tensor> grads; // in place: each slot's gradient, reduced where it lies
  at::Tensor status;             // in place: the one-element status
  std::vector<bool> packed;      // per slot, this step
  std::size_t pending = 0;       // slots not yet packed
  bool ready = false;            // all slots packed (or filled by finish)
  std::uint64_t place = 0;       // its place in options.order, once it has one
  double first_pack_us = -1, ready_us = 0;
};

namespace {

// PyTorch names its dtypes as the dtype table does ("float32").
DType dtype_of(at::ScalarType t) {
  const DTypeTraits* traits = find_dtype(c10::getDtypeNames(t).first);
  if (!traits || !traits->floating)
    throw Error(cat("gradient engine: unsupported parameter dtype ", at::toString(t)));
  return traits->dtype;
}

// A parameter's slot in a fusion buffer, seen with the parameter's own layout: a channels_last weight's
// gradient is packed and handed back channels_last, element for element in memory order, without a copy
// into NCHW on the way in or a layout the optimizer must convert on the way out.
at::Tensor slot_with_layout_of(const at::Tensor& slot, const at::Tensor& param) {
  if (param.is_non_overlapping_and_dense()) return slot.as_strided(param.sizes(), param.strides());
  return slot.view(param.sizes());
}

// Runs after AccumulateGrad has written a parameter's .grad, so the gradient it hands on is the one that
// .grad owns (autograd's output, stolen without a copy), accumulated over earlier micro-batches.
class GradientReady final : public torch::autograd::PostAccumulateGradHook {
 public:
  GradientReady(GradientEngine& engine, std::size_t index) : engine_(engine), index_(index) {}
  void operator()(const torch::autograd::Variable& param) override { engine_.submit(index_, param.grad()); }

 private:
  GradientEngine& engine_;
  std::size_t index_;
};

}  // namespace

GradientEngine::GradientEngine(Backend& backend, const World& world, std::vector<NamedTensor> parameters,
                               const GradientEngineOptions& options, bool install_hooks)
    : backend_(backend), world_(world), options_(options), params_(std::move(parameters)),
      prescale_(options.average ? 1.0 / backend.size() : 1.0) {
  FT_REQUIRE(options_.wire == at::kFloat || options_.wire == at::kHalf || options_.wire == at::kBFloat16,
             "gradient wire type ", options_.wire, ": only fp16 or bf16 compress the all-reduce");
  if (compressed()) wire_dtype_ = dtype_of(options_.wire);
  FT_REQUIRE(!options_.reducer || !compressed(), "a bucket reducer (PowerSGD) sends the gradients' own dtype: "
             "no fp16 or bf16 wire with it");
  for (const auto& p : params_) {
    TensorSpec spec{p.name, dtype_of(p.tensor.scalar_type()), p.tensor.sizes().vec()};
    specs_.push_back(spec);
  }
  check_same_tensors(world_.allgather(describe_all(specs_)));
  // A wrapped number multiplies tensors of any device and dtype without a device copy.
  prescale_tensor_ = c10::scalar_to_tensor(prescale_);
  prescale_tensor_.unsafeGetTensorImpl()->set_wrapped_number(true);

  const auto mib = [](double m) { return static_cast<std::size_t>(m * 1024 * 1024); };
  plan_ = plan_buckets(specs_, mib(options_.first_bucket_mib), mib(options_.bucket_mib),
                       mib(options_.last_bucket_mib));
  bucket_of_.resize(specs_.size());
  slot_of_.resize(specs_.size());
  on_device_ = !params_.empty() && params_.front().tensor.is_cuda();
  solo_ = backend_.size() == 1 && !options_.reduce_alone;
  if (solo_) return;  // nothing to reduce: no buffers, hooks or thread
  in_place_ =
      options_.in_place && !on_device_ && !compressed() && !options_.reducer && backend_.reduces_spans_in_place();
  for (std::size_t b = 0; b < plan_.size(); ++b) {
    auto state = std::make_unique<BucketState>();
    const auto options = params_[plan_[b].tensors.front()].tensor.options().requires_grad(false);
    if (in_place_) {
      state->grads.resize(plan_[b].tensors.size());
      state->status = at::zeros({1}, options);
    } else {
      state->buffer = at::zeros({plan_[b].numel + 1}, options);
    }
    if (compressed()) state->wire = at::zeros({plan_[b].numel + 1}, state->buffer.options().dtype(options_.wire));
    state->packed.assign(plan_[b].tensors.size(), false);
    for (std::size_t s = 0; s < plan_[b].tensors.size(); ++s) {
      bucket_of_[plan_[b].tensors[s]] = b;
      slot_of_[plan_[b].tensors[s]] = s;
    }
    state_.push_back(std::move(state));
  }
  device_ = make_bucket_device_sync(on_device_, plan_.size());
  warm_up_transfers();

  if (install_hooks) {
    for (std::size_t i = 0; i < params_.size(); ++i) {
      auto& t = params_[i].tensor;
      if (t.requires_grad()) torch::autograd::impl::set_post_acc_grad_hooks(t, std::make_unique<GradientReady>(*this, i));
    }
  }
  thread_ = std::thread([this] { communication_loop(); });
}

GradientEngine::~GradientEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& p : params_)
    if (p.tensor.requires_grad()) torch::autograd::impl::post_acc_grad_hooks(p.tensor).reset();
}

at::Tensor GradientEngine::status(std::size_t b) const {
  return in_place_ ? state_[b]->status : state_[b]->buffer.narrow(0, plan_[b].numel, 1);
}

void GradientEngine::clear_gradients() {
  for (auto& p : params_) p.tensor.mutable_grad() = at::Tensor();
}

void GradientEngine::prepare(bool sync) {
  if (solo_) return;
  if (sync) device_->begin_step();
  std::lock_guard<std::mutex> lock(mutex_);
  sync_ = sync;
  if (!sync) return;
  for (std::size_t b = 0; b < plan_.size(); ++b) {
    auto& s = *state_[b];
    std::fill(s.packed.begin(), s.packed.end(), false);
    s.pending = s.packed.size();
    s.ready = false;
    s.first_pack_us = -1;
    status(b).zero_();
  }
  next_ = 0;
  placed_ = 0;
  finished_ = 0;
  ++step_;
}

void GradientEngine::submit(std::size_t index, const at::Tensor& grad) {
  if (solo_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!sync_) return;
  }
  const std::size_t b = bucket_of_[index], slot = slot_of_[index];
  auto& s = *state_[b];
  const double t0 = options_.timeline ? options_.timeline->now_us() : 0;
  FT_CHECK(grad.defined() && grad.scalar_type() == params_[index].tensor.scalar_type() &&
               grad.numel() == specs_[index].numel(),
           "gradient ", specs_[index].name, " does not match its parameter");
  if (in_place_) {
    // Dense memory in any layout is one span; every rank's gradient has the same layout.
    at::Tensor held = grad.is_non_overlapping_and_dense() ? grad : grad.contiguous();
    if (prescale_ != 1.0) held.mul_(prescale_);
    s.grads[slot] = std::move(held);
  } else {
    // One pass over the gradient: packing and pre-scaling by 1/world happen in the same kernel.
    auto slice = slot_with_layout_of(s.buffer.narrow(0, plan_[b].offsets[slot], specs_[index].numel()),
                                     params_[index].tensor);
    if (prescale_ == 1.0)
      slice.copy_(grad);
    else
      at::mul_out(slice, grad, prescale_tensor_);
  }
  bool now_ready = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    FT_CHECK(!s.packed[slot], "gradient ", specs_[index].name, " submitted twice in one step");
    s.packed[slot] = true;
    if (s.first_pack_us < 0) s.first_pack_us = t0;
    now_ready = --s.pending == 0;
  }
  if (now_ready) {
    device_->mark_packed(b);
    std::lock_guard<std::mutex> lock(mutex_);
    s.ready = true;
    place_ready_buckets();
    if (options_.timeline) {
      s.ready_us = options_.timeline->now_us();
      options_.timeline->record(cat("pack b", b), "engine", s.first_pack_us, s.ready_us);
    }
    cv_.notify_all();
  }
}

// Launches buckets in plan order. While none is ready it watches the backend's collectives still in
// flight on the device (NCCL), so a stalled one aborts and surfaces at the next finish() even while the
// main thread waits on the device.
void GradientEngine::communication_loop() {
  for (;;) {
    std::size_t b;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto work = [&] {
        return stop_ || drain_ || (!error_ && next_ < plan_.size() && state_[next_]->ready);
      };
      if (!cv_.wait_for(lock, std::chrono::milliseconds(50), work)) {
        if (!error_) watch_in_flight(lock, false);
        continue;
      }
      if (stop_) return;
      if (drain_) {
        if (!error_) watch_in_flight(lock, true);
        drain_ = false;
        cv_.notify_all();
        continue;
      }
      b = next_++;
      FT_CHECK(!options_.order || b < placed_, "bucket ", b, " is ready without a place in line");
    }
    try {
      const CollectiveTurn turn(options_.order, state_[b]->place, cat("the all-reduce of bucket ", b));
      run_bucket(b);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++finished_;
    }
    cv_.notify_all();
  }
}

// On the communication thread only: retires the collectives the device has completed (wait: all of them).
void GradientEngine::watch_in_flight(std::unique_lock<std::mutex>& lock, bool wait) {
  lock.unlock();
  std::exception_ptr failure;
  try {
    if (wait)
      backend_.wait_in_flight();
    else
      backend_.poll_in_flight();
  } catch (...) {
    failure = std::current_exception();
  }
  lock.lock();
  if (failure && !error_) error_ = failure;
  if (failure) cv_.notify_all();
}

void GradientEngine::run_bucket(std::size_t b) {
  auto& s = *state_[b];
  Timeline* timeline = options_.timeline;
  const auto began = std::chrono::steady_clock::now();  // the stats' clock, with or without a timeline
  const double start = timeline ? timeline->now_us() : 0;
  if (timeline) timeline->record(cat("queue b", b), "comm", s.ready_us, start);
  const DType dtype = compressed() ? wire_dtype_ : plan_[b].dtype;
  std::int64_t bytes = 0;
  const CollectiveLabel label(cat("bucket ", b, " of step ", step_));
  if (in_place_) {
    std::vector<HostSpan> spans;
    for (auto& grad : s.grads) spans.push_back({grad.data_ptr(), static_cast<std::size_t>(grad.numel())});
    spans.push_back({s.status.data_ptr(), 1});
    backend_.allreduce_spans(spans, dtype);
    bytes = static_cast<std::int64_t>((plan_[b].numel + 1) * dtype_size(dtype));
  } else {
    device_->run(b, [&] {
      if (options_.reducer) {
        options_.reducer->reduce(plan_[b], s.buffer, [&](at::Tensor& part) {
          device_->allreduce(backend_, part, dtype);
          bytes += part.numel() * part.element_size();
        });
        return;
      }
      at::Tensor data = s.buffer;
      if (compressed()) {
        s.wire.copy_(s.buffer);
        data = s.wire;
      }
      device_->allreduce(backend_, data, dtype);
      if (compressed()) s.buffer.copy_(s.wire);
      bytes = data.numel() * data.element_size();
    });
  }
  const double end = timeline ? timeline->now_us() : 0;
  if (timeline)
    timeline->record(cat("allreduce b", b), "comm", start, end,
                     cat("{\"bytes\":", bytes, ",\"tensors\":",
                         plan_[b].tensors.size(), "}"));
  std::lock_guard<std::mutex> lock(mutex_);
  if (!device_->times_on_device())
    stats_.allreduce_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  stats_.buckets += 1;
  stats_.bytes += bytes;
}

void GradientEngine::complete_missing() {
  std::vector<std::size_t> filled;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t b = 0; b < plan_.size(); ++b) {
      auto& s = *state_[b];
      if (s.ready) continue;
      std::size_t missing = 0;
      for (std::size_t slot = 0; slot < s.packed.size(); ++slot) {
        if (s.packed[slot]) continue;
        const std::size_t index = plan_[b].tensors[slot];
        if (in_place_)
          s.grads[slot] = at::zeros_like(params_[index].tensor, at::MemoryFormat::Preserve).detach();
        else
          s.buffer.narrow(0, plan_[b].offsets[slot], specs_[index].numel()).zero_();
        s.packed[slot] = true;
        ++missing;
      }
      status(b).fill_(static_cast<double>(missing));
      s.pending = 0;
      filled.push_back(b);
    }
  }
  for (auto b : filled) device_->mark_packed(b);
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto b : filled) {
    state_[b]->ready = true;
    state_[b]->ready_us = options_.timeline ? options_.timeline->now_us() : 0;
  }
  place_ready_buckets();
  cv_.notify_all();
}

// One all-reduce of each distinct size and wire type the buckets send (device backends only: NCCL connects
// the channels a size needs on its first collective of that size, and that set-up belongs before training).
void GradientEngine::warm_up_transfers() {
  if (!on_device_ || in_place_) return;
  std::set<std::pair<std::int64_t, int>> seen;
  std::vector<std::pair<at::Tensor, DType>> buffers;
  for (std::size_t b = 0; b < plan_.size(); ++b) {
    const at::Tensor& data = compressed() ? state_[b]->wire : state_[b]->buffer;
    const DType dtype = compressed() ? wire_dtype_ : plan_[b].dtype;
    if (seen.insert({data.numel(), static_cast<int>(dtype)}).second) buffers.emplace_back(data, dtype);
  }
  device_->warm_up(backend_, buffers);
}

void GradientEngine::place_ready_buckets() {
  if (!options_.order) return;
  while (placed_ < plan_.size() && state_[placed_]->ready) state_[placed_++]->place = options_.order->take();
}

void GradientEngine::finish() {
  if (solo_) return;
  device_->mark_backward_end();
  std::vector<std::string> missing_here;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    FT_CHECK(sync_, "GradientEngine::finish without prepare(true)");
    for (std::size_t b = 0; b < plan_.size(); ++b)
      for (std::size_t slot = 0; slot < state_[b]->packed.size(); ++slot)
        if (!state_[b]->packed[slot]) missing_here.push_back(specs_[plan_[b].tensors[slot]].name);
  }
  complete_missing();

  const auto t0 = std::chrono::steady_clock::now();
  const double start_us = options_.timeline ? options_.timeline->now_us() : 0;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // The backends bound each collective by the stall timeout; this bound only catches a stuck thread.
    const auto limit = std::chrono::duration<double>(options_.stall_timeout_s * (plan_.size() + 1) + 30);
    const bool done = cv_.wait_for(lock, limit, [&] { return finished_ == plan_.size() || error_; });
    if (error_) std::rethrow_exception(error_);
    FT_REQUIRE(done, "gradient all-reduce did not complete within ", limit.count(),
               " s on rank ", world_.rank(), ": communication thread stalled");
  }
  device_->wait_all(plan_.size());
  if (!device_->times_on_device())
    stats_.wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (options_.timeline) options_.timeline->record("wait", "compute", start_us, options_.timeline->now_us());

  const TimelineSpan unpack(options_.timeline, "unpack", "compute");
  const bool any_missing = missing_anywhere(missing_here);
  for (std::size_t b = 0; b < plan_.size(); ++b) {
    auto& s = *state_[b];
    for (std::size_t slot = 0; slot < plan_[b].tensors.size(); ++slot) {
      const std::size_t index = plan_[b].tensors[slot];
      auto& param = params_[index].tensor;
      if (in_place_) {
        // Usually .grad itself already; the engine lets go so the next step's gradients can be stolen.
        at::Tensor grad = std::move(s.grads[slot]);
        s.grads[slot] = at::Tensor();
        param.mutable_grad() = grad.sizes() == param.sizes() ? std::move(grad) : grad.view(param.sizes());
      } else {
        param.mutable_grad() =
            slot_with_layout_of(s.buffer.narrow(0, plan_[b].offsets[slot], specs_[index].numel()), param);
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sync_ = false;
  }
  if (any_missing) raise_missing(missing_here);
}

void GradientEngine::wait_transfers() {
  if (solo_) return;
  std::unique_lock<std::mutex> lock(mutex_);
  drain_ = true;
  cv_.notify_all();
  // The backend bounds the wait by the stall timeout; this bound only catches a stuck thread.
  const auto limit = std::chrono::duration<double>(options_.stall_timeout_s + 30);
  const bool done = cv_.wait_for(lock, limit, [&] { return !drain_; });
  if (error_) std::rethrow_exception(error_);
  FT_REQUIRE(done, "the transfers in flight did not complete within ", limit.count(), " s on rank ", world_.rank(),
             ": communication thread stalled");
}

EngineStats GradientEngine::stats() {
  if (!solo_ && device_->times_on_device()) device_->collect(stats_.allreduce_s, stats_.wait_s, stats_.untimed_steps);
  return stats_;
}

// Whether some rank lacked a gradient this step. On the host the status elements reduced with the buckets
// say so for free; on a GPU reading them would wait for every all-reduce, so the ranks' own knowledge is
// agreed in one small host collective instead and the device is left running.
bool GradientEngine::missing_anywhere(const std::vector<std::string>& missing_here) {
  if (on_device_) {
    const CollectiveLabel label("missing-gradient flags");
    return world_.allreduce_max(missing_here.empty() ? 0.0 : 1.0) > 0;
  }
  for (std::size_t b = 0; b < plan_.size(); ++b)
    if (status(b).item<double>() != 0) return true;
  return false;
}

void GradientEngine::raise_missing(const std::vector<std::string>& missing_here) {
  std::string mine;
  for (const auto& name : missing_here) mine += name + "\n";
  const auto lists = world_.allgather(mine);
  std::vector<std::set<std::string>> missing(lists.size());
  std::set<std::string> any;
  for (std::size_t r = 0; r < lists.size(); ++r) {
    std::istringstream in(lists[r]);
    for (std::string name; std::getline(in, name);) missing[r].insert(name), any.insert(name);
  }
  std::ostringstream msg;
  bool fatal = false;
  for (const auto& name : any) {
    std::vector<int> without;
    for (std::size_t r = 0; r < missing.size(); ++r)
      if (missing[r].count(name)) without.push_back(static_cast<int>(r));
    if (without.size() == missing.size()) {
      // Unused everywhere: no rank has a gradient, so the parameter simply does not train this step.
      for (std::size_t i = 0; i < specs_.size(); ++i)
        if (specs_[i].name == name) params_[i].tensor.mutable_grad() = at::Tensor();
      continue;
    }
    fatal = true;
    msg << " '" << name << "' on rank" << (without.size() > 1 ? "s " : " ");
    for (std::size_t k = 0; k < without.size(); ++k) msg << (k ? "," : "") << without[k];
    msg << ";";
  }
  FT_REQUIRE(!fatal, "step ", step_, ": gradient missing on some ranks but not others:", msg.str(),
             " every rank must compute a gradient for every parameter each step");
}

}  // namespace ft
