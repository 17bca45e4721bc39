// Busy threads that stand in for a training step's compute: a link sweep times its all-reduces beside them, as
// the buckets of a step are all-reduced while backward keeps the rank's cores busy.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace ft {

// `threads` threads, each multiplying and adding over a buffer of its own that fits a core's L2 cache, from
// construction until destruction; none when `threads` is 0. Throws ft::Error for a negative count.
class ComputeLoad {
 public:
  explicit ComputeLoad(int threads);
  ~ComputeLoad();
  ComputeLoad(const ComputeLoad&) = delete;
  ComputeLoad& operator=(const ComputeLoad&) = delete;

  int threads() const { return static_cast<int>(threads_.size()); }
  // Passes over the buffers done so far, all threads together: proof that they ran, and their pace.
  std::int64_t passes() const { return passes_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> passes_{0};
  std::vector<std::thread> threads_;
};

}  // namespace ft
