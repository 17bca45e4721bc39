// The host phase clock and the factory; the CUDA event type of the device clock is ATen's CUDAEvent
// with timing enabled, recorded on the current (compute) stream.
#include "monitor/phase_clock.h"

#ifdef FUSETRAIN_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include "runtime/error.h"

namespace ft {
namespace {

class HostPhaseClock final : public PhaseClock {
 public:
  void begin() override { clock_.reset(); }
  void end(Phase phase) override { times_.add(phase, clock_.seconds()); }
  const PhaseTimes& totals() override { return times_; }
  PhaseClockKind kind() const override { return PhaseClockKind::host; }

 private:
  Stopwatch clock_;
  PhaseTimes times_;
};

#ifdef FUSETRAIN_WITH_CUDA
struct CudaTimingEvent {
  at::cuda::CUDAEvent event{cudaEventDefault};  // timing enabled
  void record() { event.record(c10::cuda::getCurrentCUDAStream()); }
  bool query() const { return event.query(); }
  double seconds_to(const CudaTimingEvent& later) const {
    later.event.synchronize();
    return static_cast<double>(event.elapsed_time(later.event)) * 1e-3;
  }
};
#endif

}  // namespace

const char* phase_clock_name(PhaseClockKind kind) {
  return kind == PhaseClockKind::cuda_events ? "cuda_events" : "host";
}

std::unique_ptr<PhaseClock> make_phase_clock(const at::Device& device) {
  if (!device.is_cuda()) return std::make_unique<HostPhaseClock>();
#ifdef FUSETRAIN_WITH_CUDA
  return std::make_unique<EventPhaseClock<CudaTimingEvent>>(PhaseClockKind::cuda_events);
#else
  throw Error("phase timing on a CUDA device needs a fusetrain built with CUDA");
#endif
}

}  // namespace ft
