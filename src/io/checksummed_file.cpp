// CRC-32 trailers with Boost.CRC: appended on write, checked on read by streaming the payload in blocks;
// after a write the file's cached pages are dropped so that the check reads what reached the disk.
#include "io/checksummed_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/crc.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "io/atomic_file.h"
#include "runtime/error.h"

namespace ft {
namespace {

constexpr std::size_t kMagicBytes = sizeof(kChecksumMagic) - 1;
static_assert(kMagicBytes == 8, "the trailer's magic is 8 bytes");

void put_le(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::uint64_t get_le(const char* in, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= std::uint64_t{static_cast<unsigned char>(in[i])} << (8 * i);
  return value;
}

struct Trailer {
  std::uint32_t crc = 0;
  std::uint64_t payload_bytes = 0;
};

// What is wrong with `trailer` (the last kChecksumTrailerBytes of a file of `file_bytes`), or "".
std::string trailer_problem(const char* trailer, std::uint64_t file_bytes, Trailer& out) {
  if (file_bytes < kChecksumTrailerBytes || std::memcmp(trailer + 12, kChecksumMagic, kMagicBytes) != 0)
    return "no checksum: the file is truncated or was written without one";
  out.crc = static_cast<std::uint32_t>(get_le(trailer, 4));
  out.payload_bytes = get_le(trailer + 4, 8);
  const std::uint64_t held = file_bytes - kChecksumTrailerBytes;
  if (out.payload_bytes != held)
    return cat("garbled checksum: it covers ", out.payload_bytes, " bytes but ", held, " precede it");
  return "";
}

std::string mismatch(std::uint32_t computed, std::uint32_t stored) {
  return computed == stored ? "" : "checksum mismatch";
}

// The CRC-32 of the file's first `bytes` bytes, read in blocks; "" in `problem` unless reading failed.
std::uint32_t crc_of_prefix(int fd, std::uint64_t bytes, std::string& problem) {
  boost::crc_32_type crc;
  std::vector<char> block(std::size_t{4} << 20);
  std::uint64_t done = 0;
  while (done < bytes) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), bytes - done));
    const ssize_t n = ::pread(fd, block.data(), want, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      problem = n < 0 ? cat("cannot be read: ", std::strerror(errno)) : "truncated while being read";
      return 0;
    }
    crc.process_bytes(block.data(), static_cast<std::size_t>(n));
    done += static_cast<std::uint64_t>(n);
  }
  return crc.checksum();
}

std::string open_file_problem(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return cat("cannot be examined: ", std::strerror(errno));
  const std::uint64_t size = static_cast<std::uint64_t>(info.st_size);
  char trailer[kChecksumTrailerBytes] = {};
  if (size >= kChecksumTrailerBytes &&
      ::pread(fd, trailer, kChecksumTrailerBytes, static_cast<off_t>(size - kChecksumTrailerBytes)) !=
          static_cast<ssize_t>(kChecksumTrailerBytes))
    return cat("cannot be read: ", std::strerror(errno));
  Trailer stored;
  std::string problem = trailer_problem(trailer, size, stored);
  if (!problem.empty()) return problem;
  const std::uint32_t computed = crc_of_prefix(fd, stored.payload_bytes, problem);
  return problem.empty() ? mismatch(computed, stored.crc) : problem;
}

}  // namespace

std::string with_checksum(std::string payload) {
  boost::crc_32_type crc;
  crc.process_bytes(payload.data(), payload.size());
  const std::uint64_t size = payload.size();
  put_le(payload, crc.checksum(), 4);
  put_le(payload, size, 8);
  payload.append(kChecksumMagic, kMagicBytes);
  return payload;
}

std::string checksum_problem(const std::string& bytes) {
  const std::uint64_t size = bytes.size();
  const char* trailer = size >= kChecksumTrailerBytes ? bytes.data() + size - kChecksumTrailerBytes : "";
  Trailer stored;
  const std::string problem = trailer_problem(trailer, size, stored);
  if (!problem.empty()) return problem;
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), stored.payload_bytes);
  return mismatch(crc.checksum(), stored.crc);
}

std::string file_checksum_problem(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return errno == ENOENT ? "missing" : cat("cannot be opened: ", std::strerror(errno));
  const std::string problem = open_file_problem(fd);
  ::close(fd);
  return problem;
}

void write_checksummed_file(const std::string& path, std::string payload) {
  write_file_atomically(path, with_checksum(std::move(payload)));
  // The file was flushed before its rename: its cached pages are clean and can be dropped, so the check
  // below reads the disk's copy rather than the bytes this process just handed to the kernel.
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  const std::string problem = file_checksum_problem(path);
  if (problem.empty()) return;
  std::remove(path.c_str());
  throw Error(cat(path, " does not read back as written (", problem, "): it was removed"));
}

}  // namespace ft
