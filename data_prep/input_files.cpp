// Checked file access for the readers: a missing, unreadable or short file becomes an ft::Error
// that names the file, so a user can tell which of a release's many files is at fault.
#include "data_prep/input_files.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "io/paths.h"
#include "runtime/error.h"

namespace ft::prep {

void require_directory(const std::string& path) {
  FT_REQUIRE(paths::is_directory(path), path, ": input directory does not exist");
}

std::string release_dir(const std::string& input, const std::string& subdir) {
  require_directory(input);
  const std::string nested = paths::join(input, subdir);
  return paths::is_directory(nested) ? nested : input;
}

void require_file(const std::string& path, const std::string& expected) {
  FT_REQUIRE(paths::is_regular_file(path), path, ": missing (", expected, ")");
}

std::uint64_t file_size(const std::string& path) {
  return paths::file_size(path);
}

bool has_image_extension(const std::string& name) {
  const auto dot = name.rfind('.');
  std::string ext = dot == std::string::npos ? std::string() : name.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  FT_REQUIRE(file != nullptr, path, ": cannot open: ", std::strerror(errno));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(file_size(path)));
  const std::size_t got = std::fread(bytes.data(), 1, bytes.size(), file.get());
  FT_REQUIRE(got == bytes.size(), path, ": read ", got, " of ", bytes.size(),
             " bytes: ", std::ferror(file.get()) ? std::strerror(errno) : "file shrank while reading");
  return bytes;
}

std::vector<std::string> class_names_or(const std::string& path, std::vector<std::string> fallback,
                                        std::vector<std::string>& sources) {
  if (!paths::exists(path)) return fallback;
  std::ifstream in(path);
  FT_REQUIRE(in.good(), path, ": cannot open: ", std::strerror(errno));
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    names.push_back(line.substr(first, last - first + 1));
  }
  FT_REQUIRE(names.size() == fallback.size(), path, ": lists ", names.size(), " class names, expected ",
             fallback.size());
  sources.push_back(path);
  return names;
}

}  // namespace ft::prep
