// State digests with OpenSSL's SHA-256 over the raw bytes of each tensor in a fixed order; the tensors are
// copied to the CPU and made contiguous in their logical order, so the layout in memory does not count.
#include "train/state_digest.h"

#include <openssl/evp.h>

#include <cstdio>
#include <memory>

#include "runtime/error.h"
#include "train/model_file.h"
#include "train/optimizer.h"

namespace ft {

std::string tensors_digest(const std::vector<at::Tensor>& tensors) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  FT_CHECK(context && EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) == 1, "SHA-256 could not start");
  for (const at::Tensor& t : tensors) {
    if (!t.defined()) continue;
    const at::Tensor host = t.detach().to(at::kCPU).contiguous();
    FT_CHECK(EVP_DigestUpdate(context.get(), host.data_ptr(), host.nbytes()) == 1, "SHA-256 update failed");
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  FT_CHECK(EVP_DigestFinal_ex(context.get(), digest, &length) == 1, "SHA-256 could not finish");
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", digest[i]);
    hex += two;
  }
  return hex;
}

std::string weights_digest(Network& network) {
  std::vector<at::Tensor> tensors;
  for (const auto& [name, t] : model_state(network)) tensors.push_back(t);
  return tensors_digest(tensors);
}

std::string optimizer_digest(torch::optim::Optimizer& optimizer) {
  std::vector<at::Tensor> tensors;
  update_optimizer_state(optimizer, [&](const std::string&, const at::Tensor& t) {
    tensors.push_back(t);
    return t;
  });
  return tensors_digest(tensors);
}

}  // namespace ft
