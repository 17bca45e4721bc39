// The compute load of compute_load.h: each thread sweeps y = a x + y over 256 KiB until told to stop.
#include "runtime/compute_load.h"

#include "runtime/error.h"

namespace ft {
namespace {

constexpr std::size_t kElements = 32 * 1024;  // two float arrays of 128 KiB: inside a core's L2 cache

void run_load(const std::atomic<bool>& stop, std::atomic<std::int64_t>& passes) {
  std::vector<float> x(kElements, 1.0f), y(kElements, 0.0f);
  float a = 0.5f;
  while (!stop.load(std::memory_order_relaxed)) {
    for (std::size_t i = 0; i < kElements; ++i) y[i] = a * x[i] + y[i];
    a = y[kElements / 2] > 1e6f ? -a : a;  // keep the values finite and the loop's result used
    passes.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace

ComputeLoad::ComputeLoad(int threads) {
  FT_REQUIRE(threads >= 0, "a compute load of ", threads, " threads: the count must be 0 or more");
  for (int t = 0; t < threads; ++t) threads_.emplace_back(run_load, std::cref(stop_), std::ref(passes_));
}

ComputeLoad::~ComputeLoad() {
  stop_.store(true, std::memory_order_relaxed);
  for (auto& t : threads_) t.join();
}

}  // namespace ft
