// The one policy for every file a command writes: an existing file is replaced only when the user said so,
// an input of the same command is never an output, and the path is checked before any work starts.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ft {

// An output path as a command is about to write it, and what the user allowed.
struct OutputClaim {
  std::string path;            // the file to write
  std::string named_by;        // how the user gave it, for messages: "--out", "output.name", ...
  std::string replace_switch;  // what allows replacing an existing file: "--force", "output.overwrite: true"
  bool replace = false;        // the user allowed replacing an existing file
  std::vector<std::pair<std::string, std::string>> inputs;  // (how named, path) of files the command reads
};

// Checks `claim` before any work: its folder is created and written to (a full or read-only file system
// shows now), the path is not a folder, not the same file as any input (whatever --force says), and not
// an existing file unless replacing was allowed. Throws ft::Error naming the path, the option that gave
// it and, for an existing file, the switch that would allow replacing it. Removes temporaries that dead
// processes left while writing it.
void claim_output(const OutputClaim& claim);

// Adds what a command reads at `path`, named `named_by` in messages: a file as itself, a folder as every file
// directly in it (a data folder's shards, an input folder's images); nothing for a path that does not exist.
void add_inputs(std::vector<std::pair<std::string, std::string>>& inputs, const std::string& named_by,
                const std::string& path);

// True when `a` and `b` are the same file: the same device and inode when both exist (links, "./x" and
// "x"), else the same absolute normal path.
bool same_file(const std::string& a, const std::string& b);

// "run.h5" when `taken("run.h5")` is false, else the first of run-2.h5, run-3.h5, ... that is not taken:
// a fresh name beside `path` for an output whose default name an earlier command already used.
std::string first_free_path(const std::string& path, const std::function<bool(const std::string&)>& taken);
// The same with "taken" meaning "exists".
std::string first_free_path(const std::string& path);

// `path` with "-<n>" before its extension (n >= 2); `path` itself for n == 1.
std::string numbered_path(const std::string& path, int n);

}  // namespace ft
