// CudaGraph over at::cuda::CUDAGraph: warm-up and capture on one pooled stream ordered after the current
// stream (and the current stream after it), in thread-local mode so other threads' calls are not checked.
#include "device/cuda_graph.h"

#include "runtime/error.h"

#ifdef FUSETRAIN_WITH_CUDA
#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace ft {

struct CudaGraph::Impl {
  at::cuda::CUDAGraph graph;
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();

  // Runs `work` on the side stream, ordered after the current stream's queue, and the current stream after it.
  void on_side(const std::function<void()>& work) {
    const auto current = c10::cuda::getCurrentCUDAStream();
    at::cuda::CUDAEvent queued;
    queued.record(current);
    queued.block(side);
    {
      const c10::cuda::CUDAStreamGuard guard(side);
      work();
    }
    at::cuda::CUDAEvent done;
    done.record(side);
    done.block(current);
  }
};

CudaGraph::CudaGraph() : impl_(std::make_unique<Impl>()) {}
CudaGraph::~CudaGraph() = default;

void CudaGraph::warm_up(const std::function<void()>& work) { impl_->on_side(work); }

void CudaGraph::capture(const std::function<void()>& work) {
  auto& graph = impl_->graph;
  const bool cache = at::autocast::is_autocast_cache_enabled();
  impl_->on_side([&] {
    at::autocast::set_autocast_cache_enabled(false);
    graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    try {
      work();
    } catch (...) {
      try {
        graph.capture_end();  // ends the capture so that the stream is usable for the error's unwinding
      } catch (...) {
      }
      at::autocast::set_autocast_cache_enabled(cache);
      throw;
    }
    graph.capture_end();
    at::autocast::set_autocast_cache_enabled(cache);
  });
}

void CudaGraph::replay() { impl_->graph.replay(); }

void* current_cuda_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

}  // namespace ft

#else

namespace ft {

struct CudaGraph::Impl {};

CudaGraph::CudaGraph() {
  FT_REQUIRE(false, "train.cuda_graphs: this build has no CUDA (configure with FUSETRAIN_CUDA=ON)");
}
CudaGraph::~CudaGraph() = default;
void CudaGraph::warm_up(const std::function<void()>&) {}
void CudaGraph::capture(const std::function<void()>&) {}
void CudaGraph::replay() {}
void* current_cuda_stream() { return nullptr; }

}  // namespace ft

#endif
