// GraphedStep: warm-up, capture and replay of one training step over static buffers (train.cuda_graphs),
// and the gradient buffers it writes into (one per parameter type). Only the copies into the inputs run outside the recording.
#include "device/graphed_step.h"

#include <map>
#include <utility>

#include "comm/backend.h"
#include "comm/dtype.h"
#include "runtime/error.h"

namespace ft {

GradientBuffer::GradientBuffer(const std::vector<at::Tensor>& parameters, const at::Device& device) {
  std::map<at::ScalarType, std::int64_t> totals;
  for (const auto& p : parameters) {
    const auto type = p.scalar_type();
    FT_CHECK((type == at::kFloat || type == at::kHalf || type == at::kBFloat16) && p.device() == device,
             "train.cuda_graphs: a parameter of type ", type, " on ", p.device(), "; the gradient buffers are "
             "float32, float16 or bfloat16 on ", device);
    totals[type] += p.numel();
  }
  std::map<at::ScalarType, std::int64_t> offsets;
  for (const auto& [type, total] : totals) {
    offsets[type] = 0;
    buffers_[type] = at::zeros({total}, at::TensorOptions().device(device).dtype(type));
  }
  for (auto p : parameters) {
    const auto slot = buffers_[p.scalar_type()].narrow(0, offsets[p.scalar_type()], p.numel());
    p.mutable_grad() =
        p.is_non_overlapping_and_dense() ? slot.as_strided(p.sizes(), p.strides()) : slot.view(p.sizes());
    offsets[p.scalar_type()] += p.numel();
  }
}

void GradientBuffer::zero() const {
  for (const auto& [type, buffer] : buffers_) buffer.zero_();
}

const at::Tensor& GradientBuffer::tensor(at::ScalarType type) const {
  const auto it = buffers_.find(type);
  FT_CHECK(it != buffers_.end(), "gradient buffer: no parameter of type ", type);
  return it->second;
}

void GradientBuffer::allreduce(Backend& backend) const {
  backend.wait_in_flight(buffers_.size() * (kInFlight - 1));
  for (const auto& [type, buffer] : buffers_)
    backend.allreduce(buffer.data_ptr(), static_cast<std::size_t>(buffer.numel()),
                      type == at::kFloat ? DType::kFloat32 : type == at::kHalf ? DType::kFloat16 : DType::kBFloat16,
                      buffer.is_cuda() ? current_cuda_stream() : nullptr);
}

GraphedStep::GraphedStep(Body body, RecordingFactory record) : body_(std::move(body)), record_(std::move(record)) {
  if (!record_) record_ = [] { return std::make_unique<CudaGraph>(); };
}

// The static inputs on the first batch (with its layout, channels_last included) and the outputs; later
// batches must have the same shape: a graph replays fixed sizes.
void GraphedStep::hold(const at::Tensor& x, const at::Tensor& y) {
  if (!buffers_.x.defined()) {
    buffers_.x = at::empty_like(x, at::MemoryFormat::Preserve);
    buffers_.y = at::empty_like(y);
    buffers_.loss = at::zeros({}, x.options().dtype(at::kDouble));
    buffers_.correct = at::zeros({}, y.options().dtype(at::kLong));
  }
  FT_CHECK(x.sizes() == buffers_.x.sizes() && y.sizes() == buffers_.y.sizes(),
           "train.cuda_graphs: a batch of shape ", x.sizes(), " after batches of ", buffers_.x.sizes(),
           "; a captured step replays one shape");
  buffers_.x.copy_(x);
  buffers_.y.copy_(y);
}

const StepBuffers& GraphedStep::run(const at::Tensor& x, const at::Tensor& y) {
  hold(x, y);
  if (!recording_) recording_ = record_();
  if (captured_) {
    recording_->replay();
    ++replays_;
  } else if (eager_steps_ < kWarmupSteps) {
    ++eager_steps_;
    recording_->warm_up([&] { body_(buffers_); });
  } else {
    recording_->capture([&] { body_(buffers_); });
    captured_ = true;
    recording_->replay();
    ++replays_;
  }
  return buffers_;
}

}  // namespace ft
