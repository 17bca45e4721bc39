// Terminal detection as a rank under Open MPI sees it: its own standard output is a pseudo-terminal, and the
// parent's (mpirun's) decides; looking at the parent's never makes the rank take that terminal as its own.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>

#include "monitor/terminal.h"

// gcov's flush, present only in a build with --coverage: _exit skips the one at exit, and the lines a child ran
// would be missing from the coverage that picks the tests of a line (tools/mutants/coverage_map.py).
extern "C" void __gcov_dump(void) __attribute__((weak));

namespace ft {
namespace {

// The exit code of `body` run in a child process (-1 when it did not exit normally).
int in_child(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int code = body();
    if (__gcov_dump != nullptr) __gcov_dump();
    _exit(code);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// A new pseudo-terminal's secondary side, opened without making it anyone's controlling terminal; -1 on failure.
int open_pseudo_terminal() {
  const int primary = posix_openpt(O_RDWR | O_NOCTTY);
  if (primary < 0 || grantpt(primary) != 0 || unlockpt(primary) != 0) return -1;
  const char* name = ptsname(primary);
  return name == nullptr ? -1 : open(name, O_RDWR | O_NOCTTY);  // the primary stays open with the child
}

enum Seen { kTerminal = 1, kTookTheTerminal = 2, kSetUpFailed = 4 };

// A launcher whose standard output is `launcher_out` starts a rank in a session of its own without a
// controlling terminal, its standard output a pseudo-terminal; returns what the rank saw (Seen bits).
int rank_sees(const std::function<int()>& launcher_out) {
  return in_child([&] {
    const int out = launcher_out();
    if (out < 0 || dup2(out, STDOUT_FILENO) < 0) return static_cast<int>(kSetUpFailed);
    return in_child([] {
      const int own = setsid() < 0 ? -1 : open_pseudo_terminal();
      if (own < 0 || dup2(own, STDOUT_FILENO) < 0 || setenv("OMPI_COMM_WORLD_SIZE", "2", 1) != 0)
        return static_cast<int>(kSetUpFailed);
      int seen = stdout_is_terminal() ? kTerminal : 0;
      if (open("/dev/tty", O_RDWR | O_NOCTTY) >= 0) seen |= kTookTheTerminal;
      return seen;
    });
  });
}

TEST(Terminal, UnderOpenMpiTheLaunchersOutputDecides) {
  EXPECT_EQ(rank_sees(open_pseudo_terminal), kTerminal);
  EXPECT_EQ(rank_sees([] { return open("/dev/null", O_WRONLY); }), 0);  // a character device, not a terminal
  EXPECT_EQ(rank_sees([] {
              int ends[2];
              return pipe(ends) == 0 ? ends[1] : -1;
            }),
            0);
}

TEST(Terminal, OutsideOpenMpiItIsStandardOutputItself) {
  EXPECT_EQ(in_child([] {
              const int out = open_pseudo_terminal();
              if (out < 0 || dup2(out, STDOUT_FILENO) < 0 || unsetenv("OMPI_COMM_WORLD_SIZE") != 0)
                return static_cast<int>(kSetUpFailed);
              return stdout_is_terminal() ? 1 : 0;
            }),
            1);
  EXPECT_EQ(in_child([] {
              const int out = open("/dev/null", O_WRONLY);
              if (out < 0 || dup2(out, STDOUT_FILENO) < 0) return static_cast<int>(kSetUpFailed);
              return stdout_is_terminal() ? 1 : 0;
            }),
            0);
}

}  // namespace
}  // namespace ft
