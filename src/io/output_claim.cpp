// Output claims on POSIX calls: stat for folders and identity (device and inode), the writable-folder
// probe of atomic_file.h, and numbered fresh names for outputs whose default name is taken.
#include "io/output_claim.h"

#include <sys/stat.h>

#include "io/atomic_file.h"
#include "io/paths.h"
#include "runtime/error.h"

namespace ft {

bool same_file(const std::string& a, const std::string& b) {
  struct stat x {}, y {};
  if (::stat(a.c_str(), &x) == 0 && ::stat(b.c_str(), &y) == 0) return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
  return paths::absolute(a) == paths::absolute(b);
}

void claim_output(const OutputClaim& c) {
  const std::string where = cat(c.named_by, " ", c.path);
  FT_REQUIRE(!c.path.empty() && !paths::filename(c.path).empty(), c.named_by, " '", c.path, "' names no file");
  for (const auto& [input_named_by, input] : c.inputs)
    FT_REQUIRE(!same_file(c.path, input), where, " is the file this command reads (", input_named_by, " ", input,
               "): write to another path");
  FT_REQUIRE(!paths::is_directory(c.path), where, " is a folder: give a file name");
  FT_REQUIRE(c.replace || !paths::exists(c.path), where, " exists and is kept: choose another path or use ",
             c.replace_switch, " to replace it");
  const std::string dir = paths::parent(c.path);
  try {
    ensure_writable_directory(dir.empty() ? "." : dir);
  } catch (const Error& e) {
    throw Error(cat(where, " cannot be written: ", e.what()));
  }
  remove_stale_temporaries(c.path);
}

void add_inputs(std::vector<std::pair<std::string, std::string>>& inputs, const std::string& named_by,
                const std::string& path) {
  if (path.empty()) return;
  if (!paths::is_directory(path)) {
    if (paths::exists(path)) inputs.emplace_back(named_by, path);
    return;
  }
  for (const std::string& name : paths::list_directory(path)) {
    const std::string file = paths::join(path, name);
    if (paths::is_regular_file(file)) inputs.emplace_back(named_by, file);
  }
}

std::string numbered_path(const std::string& path, int n) {
  if (n <= 1) return path;
  const std::string dir = paths::parent(path);
  const std::string name = paths::filename(path);
  const std::string stem = paths::stem(path);
  const std::string extension = name.substr(stem.size());
  return paths::join(dir, cat(stem, "-", n, extension));
}

std::string first_free_path(const std::string& path, const std::function<bool(const std::string&)>& taken) {
  for (int n = 1;; ++n) {
    const std::string candidate = numbered_path(path, n);
    if (!taken(candidate)) return candidate;
  }
}

std::string first_free_path(const std::string& path) {
  return first_free_path(path, [](const std::string& p) { return paths::exists(p); });
}

}  // namespace ft
