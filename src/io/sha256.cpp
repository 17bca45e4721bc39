// SHA-256 through OpenSSL's EVP interface; every call checked, the digest printed as hex.
#include "io/sha256.h"

#include <cstdio>

#include "runtime/error.h"

namespace ft {

Sha256::Sha256() : context_(EVP_MD_CTX_new(), &EVP_MD_CTX_free) {
  FT_CHECK(context_ != nullptr, "EVP_MD_CTX_new failed");
  FT_CHECK(EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) == 1, "EVP_DigestInit_ex(sha256) failed");
}

void Sha256::update(const void* data, std::size_t bytes) {
  FT_CHECK(EVP_DigestUpdate(context_.get(), data, bytes) == 1, "EVP_DigestUpdate failed");
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  FT_CHECK(EVP_DigestFinal_ex(context_.get(), digest, &length) == 1, "EVP_DigestFinal_ex failed");
  std::string text;
  for (unsigned int i = 0; i < length; ++i) {
    char pair[3];
    std::snprintf(pair, sizeof(pair), "%02x", digest[i]);
    text += pair;
  }
  return text;
}

}  // namespace ft
