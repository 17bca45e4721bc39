// A call run on a thread of its own that its owner may stop waiting for: a clean-up that can block on the
// device (an NCCL abort behind a kernel that holds the stream) must not hold an error back from its caller.
#pragma once

#include <chrono>
#include <future>
#include <thread>
#include <utility>

namespace ft {

// Starts `work` on a detached thread at construction; wait(s) waits for it at most s seconds. When the work
// never returns, its thread outlives this object and ends with the process.
class DetachedCall {
 public:
  DetachedCall() = default;

  template <class Work>
  explicit DetachedCall(Work&& work) {
    std::packaged_task<void()> task(std::forward<Work>(work));
    done_ = task.get_future();
    std::thread(std::move(task)).detach();
  }

  bool started() const { return done_.valid(); }

  // True once the work has returned (rethrowing what it threw), within `timeout_s`; false while it runs.
  bool wait(double timeout_s) {
    if (done_.wait_for(std::chrono::duration<double>(timeout_s)) != std::future_status::ready) return false;
    done_.get();
    return true;
  }

 private:
  std::future<void> done_;
};

}  // namespace ft
