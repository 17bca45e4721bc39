// CudaGraph over at::cuda::CUDAGraph: capture on a pooled stream ordered after the current stream (and the
// current stream after it), in thread-local mode so other threads' CUDA calls are not part of the capture.
#include "train/cuda_graph.h"

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
};

CudaGraph::CudaGraph() : impl_(std::make_unique<Impl>()) {}
CudaGraph::~CudaGraph() = default;

void CudaGraph::capture(const std::function<void()>& work) {
  const auto current = c10::cuda::getCurrentCUDAStream();
  const auto side = c10::cuda::getStreamFromPool();
  at::cuda::CUDAEvent queued;
  queued.record(current);
  queued.block(side);
  const bool cache = at::autocast::is_autocast_cache_enabled();
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    at::autocast::set_autocast_cache_enabled(false);
    impl_->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    try {
      work();
    } catch (...) {
      try {
        impl_->graph.capture_end();  // ends the capture so that the stream is usable for the error's unwinding
      } catch (...) {
      }
      at::autocast::set_autocast_cache_enabled(cache);
      throw;
    }
    impl_->graph.capture_end();
    at::autocast::set_autocast_cache_enabled(cache);
  }
  at::cuda::CUDAEvent recorded;
  recorded.record(side);
  recorded.block(current);
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
void CudaGraph::capture(const std::function<void()>&) {}
void CudaGraph::replay() {}
void* current_cuda_stream() { return nullptr; }

}  // namespace ft

#endif
