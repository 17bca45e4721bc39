// Temporary-name-plus-rename implementation with fsync, and the writable-directory probe used at start-up.
// rename(2) within one directory is atomic on POSIX file systems, which is all the guarantee needs.
#include "io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "io/paths.h"
#include "runtime/error.h"

namespace ft {

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
  temp_ = cat(target_, ".partial-", getpid());
}

AtomicFile::~AtomicFile() {
  if (!committed_) std::remove(temp_.c_str());
}

void AtomicFile::commit() {
  const int fd = ::open(temp_.c_str(), O_RDONLY);
  FT_REQUIRE(fd >= 0, "cannot reopen ", temp_, " to flush it: ", std::strerror(errno));
  const int synced = ::fsync(fd);
  ::close(fd);
  FT_REQUIRE(synced == 0, "cannot flush ", temp_, " to disk: ", std::strerror(errno));
  FT_REQUIRE(std::rename(temp_.c_str(), target_.c_str()) == 0, "cannot rename ", temp_, " to ",
             target_, ": ", std::strerror(errno));
  committed_ = true;
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  AtomicFile file(path);
  const int fd = ::open(file.temp_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  FT_REQUIRE(fd >= 0, "cannot create ", file.temp_path(), ": ", std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      throw Error(cat("cannot write ", path, ": ", std::strerror(err)));
    }
    done += static_cast<std::size_t>(n);
  }
  FT_REQUIRE(::close(fd) == 0, "cannot write ", path, ": ", std::strerror(errno));
  file.commit();
}

void remove_stale_temporaries(const std::string& target) {
  const std::string dir = paths::parent(target).empty() ? "." : paths::parent(target);
  const std::string prefix = paths::filename(target) + ".partial-";
  if (!paths::is_directory(dir)) return;
  for (const std::string& name : paths::list_directory(dir)) {
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      std::remove(paths::join(dir, name).c_str());
  }
}

void ensure_writable_directory(const std::string& dir) {
  const std::string failure = paths::try_create_directories(dir);
  FT_REQUIRE(failure.empty(), "output directory ", dir, " cannot be created: ", failure);
  const std::string probe = cat(dir, "/.fusetrain-write-test-", getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  FT_REQUIRE(fd >= 0, "output directory ", dir, " is not writable: ", std::strerror(errno));
  // Writing a block catches a full file system now rather than after hours of training.
  char block[4096] = {0};
  const ssize_t written = ::write(fd, block, sizeof(block));
  const int err = errno;
  const int synced = ::fsync(fd);
  ::close(fd);
  std::remove(probe.c_str());
  FT_REQUIRE(written == static_cast<ssize_t>(sizeof(block)) && synced == 0, "output directory ", dir,
             " cannot be written (", std::strerror(err), "): is the file system full?");
}

}  // namespace ft
