// File-system paths and queries on POSIX calls, used everywhere instead of std::filesystem: the pip
// LibTorch exports its own broken copy of std::filesystem, and a process must never bind to it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ft::paths {

// --- lexical operations on path strings (no file-system access) ---
std::string join(const std::string& a, const std::string& b);  // "a/b"; b when b is absolute
std::string parent(const std::string& path);                   // "a/b" for "a/b/c"; "" for "c"
std::string filename(const std::string& path);                 // "c.h5" for "a/b/c.h5" (trailing '/' ignored)
std::string stem(const std::string& path);                     // "c" for "a/b/c.h5"
std::string normal(const std::string& path);                   // "a/../b/./c/" -> "b/c"
std::string absolute(const std::string& path);                 // normal(cwd/path)
std::string current_dir();
std::string self_executable();  // the running binary, from /proc/self/exe

// --- queries: false when the path does not exist or cannot be examined ---
bool exists(const std::string& path);
bool is_directory(const std::string& path);
bool is_regular_file(const std::string& path);
// Size in bytes; throws ft::Error naming the path when it cannot be examined.
std::uint64_t file_size(const std::string& path);

// --- listing: names (not paths) of the entries of a directory, sorted; throws when unreadable ---
std::vector<std::string> list_directory(const std::string& dir);

// --- changes: each throws ft::Error naming the path and the system's reason on failure ---
void create_directories(const std::string& path);   // like mkdir -p; fine when it exists
std::string try_create_directories(const std::string& path);  // the same; "" or the reason it failed
bool remove(const std::string& path);                // file or empty directory; false when absent
void remove_all(const std::string& path);            // like rm -rf; fine when absent
void rename(const std::string& from, const std::string& to);
void add_execute_permission(const std::string& path);  // chmod a+x

}  // namespace ft::paths
