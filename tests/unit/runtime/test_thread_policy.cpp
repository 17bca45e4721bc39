// Tests of runtime/thread_policy.cpp: a thread started inside the probe is found (and only it), and
// SCHED_BATCH lands on that one thread, leaving the calling thread's policy alone.
#include "runtime/thread_policy.h"

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <future>
#include <thread>

namespace ft {
namespace {

TEST(ThreadPolicy, FindsTheThreadAStartCreates) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<long> reported;
  std::thread worker;
  const std::set<long> started = threads_started_by([&] {
    worker = std::thread([&, released] {
      reported.set_value(static_cast<long>(syscall(SYS_gettid)));
      released.wait();
    });
    reported.get_future().wait();
  });
  release.set_value();
  worker.join();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_FALSE(process_thread_ids().count(*started.begin())) << "the finished thread is still listed";
  EXPECT_TRUE(process_thread_ids().count(static_cast<long>(syscall(SYS_gettid))));
}

TEST(ThreadPolicy, BatchSchedulingAppliesToOneThreadOnly) {
  std::promise<long> tid;
  std::promise<void> release;
  std::thread worker([&, done = release.get_future()]() mutable {
    tid.set_value(static_cast<long>(syscall(SYS_gettid)));
    done.wait();
  });
  const long id = tid.get_future().get();
  const int before = sched_getscheduler(0);
  EXPECT_TRUE(set_batch_scheduling(id));
  EXPECT_EQ(sched_getscheduler(static_cast<pid_t>(id)), SCHED_BATCH);
  EXPECT_EQ(sched_getscheduler(0), before);
  release.set_value();
  worker.join();
}

TEST(ThreadPolicy, RefusedForAThreadThatDoesNotExist) {
  EXPECT_FALSE(set_batch_scheduling(0x7ffffff0L));
}

}  // namespace
}  // namespace ft
