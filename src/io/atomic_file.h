// Write-then-rename for every output file: a crash at any moment leaves the old file or the new one,
// never a half-written one. The temporary lives beside the target so the rename stays on one file system.
#pragma once

#include <string>

namespace ft {

class AtomicFile {
 public:
  explicit AtomicFile(std::string target);
  ~AtomicFile();  // removes the temporary unless commit() ran
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& temp_path() const { return temp_; }
  const std::string& target() const { return target_; }
  // fsyncs the temporary and renames it over the target.
  void commit();

 private:
  std::string target_, temp_;
  bool committed_ = false;
};

// Writes `bytes` to `path` through an AtomicFile, checking every write (a full disk is an error naming
// the path, and the old file, if any, stays).
void write_file_atomically(const std::string& path, const std::string& bytes);

// Removes temporaries of `target` left by processes that no longer exist (a crash mid-write).
void remove_stale_temporaries(const std::string& target);

// Fails early, naming the directory, when it cannot be created or written (before any training).
void ensure_writable_directory(const std::string& dir);

}  // namespace ft
