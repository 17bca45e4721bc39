// GraphedStep: warm-up, capture and replay of one training step over static buffers (train.cuda_graphs),
// and the one gradient buffer it writes into. Only the copies into the inputs run outside the recording.
#include "device/graphed_step.h"

#include <utility>

#include "comm/backend.h"
#include "comm/dtype.h"
#include "runtime/error.h"

namespace ft {

GradientBuffer::GradientBuffer(const std::vector<at::Tensor>& parameters, const at::Device& device) {
  std::int64_t total = 0;
  for (const auto& p : parameters) {
    FT_CHECK(p.scalar_type() == at::kFloat && p.device() == device, "train.cuda_graphs: a parameter of type ",
             p.scalar_type(), " on ", p.device(), "; the gradient buffer is float32 on ", device);
    total += p.numel();
  }
  buffer_ = at::zeros({total}, at::TensorOptions().device(device).dtype(at::kFloat));
  std::int64_t offset = 0;
  for (auto p : parameters) {
    const auto slot = buffer_.narrow(0, offset, p.numel());
    p.mutable_grad() =
        p.is_non_overlapping_and_dense() ? slot.as_strided(p.sizes(), p.strides()) : slot.view(p.sizes());
    offset += p.numel();
  }
}

void GradientBuffer::allreduce(Backend& backend) const {
  backend.wait_in_flight(kInFlight - 1);
  backend.allreduce(buffer_.data_ptr(), static_cast<std::size_t>(buffer_.numel()), DType::kFloat32,
                    buffer_.is_cuda() ? current_cuda_stream() : nullptr);
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
