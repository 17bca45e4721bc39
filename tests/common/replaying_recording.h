// A CUDA graph's behaviour without CUDA, for the graphed step's CPU tests: the warm-up runs the work, the
// capture keeps it without running it, and every replay runs what was kept.
#pragma once

#include <functional>

#include "device/cuda_graph.h"

namespace ft::test {

class ReplayingRecording final : public Recording {
 public:
  void warm_up(const std::function<void()>& work) override { work(); }
  void capture(const std::function<void()>& work) override { kept_ = work; }
  void replay() override { kept_(); }

 private:
  std::function<void()> kept_;
};

}  // namespace ft::test
