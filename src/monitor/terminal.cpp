// Terminal detection for the progress line: a terminal gets one line rewritten with carriage returns,
// anything else (files, pipes, Open MPI's forwarding of a redirected mpirun) plain lines.
#include "monitor/terminal.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace ft {
namespace {

// Whether /proc/<pid>/fd/1 is a terminal: a character device that answers isatty once opened (without
// becoming this process's controlling terminal, and without waiting on a device that is slow to open).
bool process_stdout_is_terminal(pid_t pid) {
  const std::string link = "/proc/" + std::to_string(pid) + "/fd/1";
  struct stat target {};
  if (::stat(link.c_str(), &target) != 0 || !S_ISCHR(target.st_mode)) return false;
  const int fd = ::open(link.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  const bool terminal = ::isatty(fd) == 1;
  ::close(fd);
  return terminal;
}

}  // namespace

bool stdout_is_terminal() {
  if (::isatty(STDOUT_FILENO) != 1) return false;
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) return true;
  return process_stdout_is_terminal(::getppid());
}

int terminal_columns() {
  struct winsize size {};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

}  // namespace ft
