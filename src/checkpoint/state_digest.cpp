// State digests with OpenSSL's SHA-256 over the raw bytes of each tensor in a fixed order; the tensors are
// copied to the CPU and made contiguous in their logical order, so the layout in memory does not count.
#include "checkpoint/state_digest.h"

#include "io/sha256.h"
#include "checkpoint/model_file.h"
#include "optim/optimizer.h"

namespace ft {

std::string tensors_digest(const std::vector<at::Tensor>& tensors) {
  Sha256 hash;
  for (const at::Tensor& t : tensors) {
    if (!t.defined()) continue;
    const at::Tensor host = t.detach().to(at::kCPU).contiguous();
    hash.update(host.data_ptr(), host.nbytes());
  }
  return hash.hex();
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
