// File-system helpers shared by the format readers: locating a release folder, checked whole-file
// reads and optional class-name lists. Every error message starts with the path it is about.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ft::prep {

// Throws "<path>: input directory does not exist" unless it does.
void require_directory(const std::string& path);

// `input/<subdir>` when that folder exists (the input is the release's parent), else `input`.
std::string release_dir(const std::string& input, const std::string& subdir);

// Throws "<path>: missing (<expected>)" unless path is a regular file.
void require_file(const std::string& path, const std::string& expected);

std::uint64_t file_size(const std::string& path);

// True for names ending in .jpg, .jpeg or .png in any case: the files image folders are made of.
bool has_image_extension(const std::string& name);

// The whole file; errors name the path and the system's reason.
std::vector<std::uint8_t> read_bytes(const std::string& path);

// Class names from an optional text file of one name per line (blank lines ignored). When the file
// exists it must list exactly fallback.size() names, and its path is appended to `sources`;
// otherwise `fallback` is returned.
std::vector<std::string> class_names_or(const std::string& path, std::vector<std::string> fallback,
                                        std::vector<std::string>& sources);

}  // namespace ft::prep
