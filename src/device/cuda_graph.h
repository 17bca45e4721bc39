// A CUDA graph warmed up and recorded on its own side stream and replayed on the current one (LibTorch's
// CUDAGraph, with its private memory pool and the default generators' offsets), and the stream it runs on.
#pragma once

#include <functional>
#include <memory>

namespace ft {

// Work recorded once and launched again: a CUDA graph on GPUs, a stand-in in the CPU tests.
class Recording {
 public:
  virtual ~Recording() = default;
  // Runs `work` now, eagerly, where capture() records it. Autograd ties a parameter's gradient accumulator
  // to the stream it was made on; one made by a warm-up elsewhere and still alive would make backward wait
  // on a stream outside the capture, which ends it with an error.
  virtual void warm_up(const std::function<void()>& work) = 0;
  // Records what `work` issues; nothing of it runs until replay().
  virtual void capture(const std::function<void()>& work) = 0;
  virtual void replay() = 0;
};

class CudaGraph final : public Recording {
 public:
  // Throws on a build without CUDA.
  CudaGraph();
  ~CudaGraph() override;
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Both on the graph's own side stream, after everything already queued on the current stream, which
  // then waits for them. Autocast's cast cache is off during the capture (a cached cast would outlive it).
  void warm_up(const std::function<void()>& work) override;
  void capture(const std::function<void()>& work) override;
  // Launches the recorded work on the current stream.
  void replay() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The current CUDA stream (a cudaStream_t) of the current device, where a replay runs; nullptr without CUDA.
void* current_cuda_stream();

}  // namespace ft
