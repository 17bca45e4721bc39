// Streams the input files through OpenSSL's EVP SHA-256 in 1 MiB blocks, so that even the large
// STL-10 files are hashed without holding them in memory twice.
#include "data_prep/checksum.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "io/sha256.h"
#include "runtime/error.h"

namespace ft::prep {

std::string sha256_of_files(std::vector<std::string> paths) {
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  Sha256 hash;
  std::vector<unsigned char> block(1 << 20);
  for (const auto& path : paths) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    FT_REQUIRE(file != nullptr, path, ": cannot open to checksum: ", std::strerror(errno));
    std::size_t got = 0;
    while ((got = std::fread(block.data(), 1, block.size(), file.get())) > 0) hash.update(block.data(), got);
    FT_REQUIRE(!std::ferror(file.get()), path, ": cannot read to checksum: ", std::strerror(errno));
  }
  return hash.hex();
}

}  // namespace ft::prep
