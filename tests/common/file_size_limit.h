// A disk that refuses to grow a file, for the tests of what a failed write says: while one of these lives,
// files this process writes may not grow past a set size (the write fails with EFBIG instead of SIGXFSZ).
#pragma once

#include <sys/resource.h>

#include <csignal>

#include <gtest/gtest.h>

namespace ft::test {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) : previous_signal_(std::signal(SIGXFSZ, SIG_IGN)) {
    getrlimit(RLIMIT_FSIZE, &previous_);
    rlimit limit = previous_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &previous_);
    std::signal(SIGXFSZ, previous_signal_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit previous_{};
  void (*previous_signal_)(int);
};

}  // namespace ft::test
