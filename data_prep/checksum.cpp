// Streams the input files through OpenSSL's EVP SHA-256 in 1 MiB blocks, so that even the large
// STL-10 files are hashed without holding them in memory twice.
#include "data_prep/checksum.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "runtime/error.h"

namespace ft::prep {

std::string sha256_of_files(std::vector<std::string> paths) {
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  FT_CHECK(ctx != nullptr, "EVP_MD_CTX_new failed");
  FT_CHECK(EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1, "EVP_DigestInit_ex(sha256) failed");
  std::vector<unsigned char> block(1 << 20);
  for (const auto& path : paths) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    FT_REQUIRE(file != nullptr, path, ": cannot open to checksum: ", std::strerror(errno));
    std::size_t got = 0;
    while ((got = std::fread(block.data(), 1, block.size(), file.get())) > 0)
      FT_CHECK(EVP_DigestUpdate(ctx.get(), block.data(), got) == 1, "EVP_DigestUpdate failed");
    FT_REQUIRE(!std::ferror(file.get()), path, ": cannot read to checksum: ", std::strerror(errno));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  FT_CHECK(EVP_DigestFinal_ex(ctx.get(), digest, &length) == 1, "EVP_DigestFinal_ex failed");
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    char pair[3];
    std::snprintf(pair, sizeof(pair), "%02x", digest[i]);
    hex += pair;
  }
  return hex;
}

}  // namespace ft::prep
