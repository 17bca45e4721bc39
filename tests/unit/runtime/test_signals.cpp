// The stop handlers: SIGUSR1, SIGTERM and SIGINT only record the signal (the run stops at the next step), and
// a blocking call they interrupt resumes (SA_RESTART) instead of failing with EINTR in the middle of a read.
#include "runtime/signals.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

namespace ft {
namespace {

// Installs the stop handlers for one test and puts the process's earlier ones back after it.
class StopHandlers : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], nullptr, &before_[i]);
    install_stop_handlers();
    clear_stop_request();
  }
  void TearDown() override {
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &before_[i], nullptr);
    clear_stop_request();
  }
  static constexpr int kSignals[3] = {SIGUSR1, SIGTERM, SIGINT};
  struct sigaction before_[3] {};
};

TEST_F(StopHandlers, EachStopSignalIsCaughtAndRestartsInterruptedCalls) {
  for (const int signal : kSignals) {
    struct sigaction now {};
    ASSERT_EQ(sigaction(signal, nullptr, &now), 0);
    EXPECT_NE(now.sa_handler, SIG_DFL) << "signal " << signal;
    EXPECT_NE(now.sa_handler, SIG_IGN) << "signal " << signal;
    EXPECT_TRUE(now.sa_flags & SA_RESTART) << "signal " << signal;
  }
}

TEST_F(StopHandlers, ASignalDuringAReadIsRecordedAndTheReadCompletes) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pthread_t reader = pthread_self();
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pthread_kill(reader, SIGUSR1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const char byte = 'x';
    EXPECT_EQ(write(fds[1], &byte, 1), 1);
  });
  char got = 0;
  const ssize_t n = read(fds[0], &got, 1);
  const int error = errno;
  sender.join();
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(n, 1) << "read failed: " << std::strerror(error);
  EXPECT_EQ(got, 'x');
  EXPECT_EQ(stop_requested(), SIGUSR1);
  clear_stop_request();
  EXPECT_EQ(stop_requested(), 0);
}

}  // namespace
}  // namespace ft
