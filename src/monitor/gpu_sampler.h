// GPU utilisation sampled through NVML by a background thread (~10 Hz) while a rank trains; the
// samples go into the results file's /utilization table. Inactive (no samples) without a GPU or NVML.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "results/run_record.h"

namespace ft {

class GpuSampler {
 public:
  // cuda_device < 0, a build without CUDA, or no loadable libnvidia-ml: the sampler stays inactive and
  // `status()` says why.
  GpuSampler(int cuda_device, int rank, double hz = 10.0);
  ~GpuSampler();
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  bool active() const { return thread_.joinable(); }
  const std::string& status() const { return status_; }
  // Stops sampling and returns every sample taken (time relative to construction).
  std::vector<UtilizationSample> stop();

 private:
  std::string status_;
  std::atomic<bool> running_{false};
  std::mutex mutex_;
  std::vector<UtilizationSample> samples_;
  std::thread thread_;
};

}  // namespace ft
