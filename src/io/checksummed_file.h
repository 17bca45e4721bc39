// Files that carry their own CRC-32: written atomically and read back before they count, verified before
// they are trusted, so a truncated file, a flipped bit or a missing or garbled checksum is always noticed.
#pragma once

#include <cstdint>
#include <string>

namespace ft {

// The 20-byte trailer after the payload: CRC-32 of the payload (4 bytes), the payload's size (8 bytes),
// both little-endian, then kChecksumMagic. Inside the file rather than in a sidecar so that a file is
// verified, renamed and removed as one unit: a rotation of checkpoints renames one file per step and never
// pairs a file with another file's checksum. Readers of the payload's format that ignore trailing bytes
// (LibTorch's zip archives) read such a file unchanged.
constexpr char kChecksumMagic[] = "FTCRC32\n";
constexpr std::size_t kChecksumTrailerBytes = 4 + 8 + 8;

// `payload` with its trailer appended.
std::string with_checksum(std::string payload);

// "" when `bytes` (a whole file: payload and trailer) verifies, else what is wrong, e.g. "checksum mismatch".
std::string checksum_problem(const std::string& bytes);

// "" when the file at `path` verifies, else what is wrong ("missing", "checksum mismatch", "truncated: ...").
// Reads the file in blocks: it need not fit in memory twice.
std::string file_checksum_problem(const std::string& path);

// Writes `payload` and its trailer to `path` atomically (io/atomic_file.h), then reads the file back from
// the disk and verifies it; a file that does not verify is removed and the error names it and the reason.
void write_checksummed_file(const std::string& path, std::string payload);

}  // namespace ft
