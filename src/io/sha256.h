// Incremental SHA-256 (OpenSSL's EVP) with its lower-case hex digest: what shard provenance and the
// training state digests both hash with.
#pragma once

#include <openssl/evp.h>

#include <cstddef>
#include <memory>
#include <string>

namespace ft {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t bytes);
  // The digest of everything updated so far as 64 hex digits; the hash cannot be updated afterwards.
  std::string hex();

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context_;
};

}  // namespace ft
