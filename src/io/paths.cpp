// POSIX implementations of the path helpers: string manipulation for the lexical part, stat/opendir/
// mkdir/unlink/rename for the rest, and errors that name the path and strerror's reason.
#include "io/paths.h"

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "runtime/error.h"

namespace ft::paths {
namespace {

std::string reason() { return std::strerror(errno); }

std::string without_trailing_slashes(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

bool stat_path(const std::string& path, struct stat& info) { return ::stat(path.c_str(), &info) == 0; }

}  // namespace

std::string join(const std::string& a, const std::string& b) {
  if (a.empty() || (!b.empty() && b.front() == '/')) return b;
  if (b.empty()) return a;
  return a.back() == '/' ? a + b : a + "/" + b;
}

std::string parent(const std::string& path) {
  const std::string p = without_trailing_slashes(path);
  const auto slash = p.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string filename(const std::string& path) {
  const std::string p = without_trailing_slashes(path);
  if (p == "/") return "";
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string stem(const std::string& path) {
  const std::string name = filename(path);
  const auto dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 || name == ".." ? name : name.substr(0, dot);
}

std::string normal(const std::string& path) {
  const bool rooted = !path.empty() && path.front() == '/';
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (begin <= path.size()) {
    const auto end = std::min(path.find('/', begin), path.size());
    const std::string part = path.substr(begin, end - begin);
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") parts.pop_back();
      else if (!rooted) parts.push_back(part);
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    begin = end + 1;
  }
  std::string out = rooted ? "/" : "";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + parts[i];
  return out.empty() ? "." : out;
}

std::string current_dir() {
  char buffer[PATH_MAX];
  FT_REQUIRE(::getcwd(buffer, sizeof buffer) != nullptr, "cannot read the current directory: ", reason());
  return buffer;
}

std::string absolute(const std::string& path) {
  return normal(!path.empty() && path.front() == '/' ? path : join(current_dir(), path));
}

std::string self_executable() {
  char buffer[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  FT_REQUIRE(n > 0, "cannot read /proc/self/exe: ", reason());
  return std::string(buffer, static_cast<std::size_t>(n));
}

bool exists(const std::string& path) {
  struct stat info {};
  return stat_path(path, info);
}

bool is_directory(const std::string& path) {
  struct stat info {};
  return stat_path(path, info) && S_ISDIR(info.st_mode);
}

bool is_regular_file(const std::string& path) {
  struct stat info {};
  return stat_path(path, info) && S_ISREG(info.st_mode);
}

std::uint64_t file_size(const std::string& path) {
  struct stat info {};
  FT_REQUIRE(stat_path(path, info), path, ": cannot read its size: ", reason());
  return static_cast<std::uint64_t>(info.st_size);
}

std::vector<std::string> list_directory(const std::string& dir) {
  DIR* handle = ::opendir(dir.c_str());
  FT_REQUIRE(handle != nullptr, "cannot list directory ", dir, ": ", reason());
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(handle)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(handle);
  std::sort(names.begin(), names.end());
  return names;
}

std::string try_create_directories(const std::string& path) {
  if (path.empty() || is_directory(path)) return "";
  if (exists(path)) return std::strerror(ENOTDIR);
  const std::string up = parent(path);
  if (!up.empty() && up != path) {
    const std::string failure = try_create_directories(up);
    if (!failure.empty()) return failure;
  }
  if (::mkdir(path.c_str(), 0777) != 0 && !(errno == EEXIST && is_directory(path))) return reason();
  return "";
}

void create_directories(const std::string& path) {
  const std::string failure = try_create_directories(path);
  FT_REQUIRE(failure.empty(), "cannot create directory ", path, ": ", failure);
}

bool remove(const std::string& path) {
  if (::remove(path.c_str()) == 0) return true;
  FT_REQUIRE(errno == ENOENT, "cannot remove ", path, ": ", reason());
  return false;
}

void remove_all(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return;
  auto unlink_entry = [](const char* entry, const struct stat*, int, struct FTW*) { return ::remove(entry); };
  FT_REQUIRE(::nftw(path.c_str(), unlink_entry, 16, FTW_DEPTH | FTW_PHYS) == 0, "cannot remove ", path, ": ",
             reason());
}

void rename(const std::string& from, const std::string& to) {
  FT_REQUIRE(::rename(from.c_str(), to.c_str()) == 0, "cannot rename ", from, " to ", to, ": ", reason());
}

void add_execute_permission(const std::string& path) {
  struct stat info {};
  FT_REQUIRE(stat_path(path, info), "cannot make ", path, " executable: ", reason());
  FT_REQUIRE(::chmod(path.c_str(), info.st_mode | S_IXUSR | S_IXGRP | S_IXOTH) == 0, "cannot make ", path,
             " executable: ", reason());
}

}  // namespace ft::paths
