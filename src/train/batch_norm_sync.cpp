// The attachment of a replica's BatchNorm layers to their communicator for model.sync_batchnorm, and the backend
// options every communicator of a run shares.
#include "train/batch_norm_sync.h"

#include "models/sync_batch_norm.h"
#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {

BackendOptions run_backend_options(const Config& config, const at::Device& device) {
  BackendOptions options;
  options.name = config.distributed.backend;
  options.allreduce = config.distributed.allreduce;
  options.mpi_algorithm = config.distributed.mpi_algorithm;
  options.stall_timeout_s = config.distributed.stall_timeout_s;
  options.cuda_device = device.is_cuda() ? device.index() : -1;
  options.interface = config.distributed.interface;
  return options;
}

BatchNormSyncing::BatchNormSyncing(const Config& config, const World& world, Network& network,
                                   const at::Device& device, Backend* given)
    : network_(network) {
  if (!config.model.sync_batchnorm || world.size() == 1) return;
  Backend* backend = given;
  if (!backend) {
    BackendOptions options = run_backend_options(config, device);
    options.allreduce = AllreduceAlgorithm::flat;  // a few kilobytes per layer: no hierarchy to gain from
    own_ = make_backend(world, options);
    backend = own_.get();
  }
  const int layers = synchronize_batch_norms(network_, std::make_shared<NormSync>(*backend));
  FT_REQUIRE(layers > 0, "model.sync_batchnorm: model.name '", config.model.name,
             "' has no BatchNorm layer to synchronise; set it to false or add {type: bn} layers");
  on_ = true;
}

BatchNormSyncing::~BatchNormSyncing() {
  if (on_) synchronize_batch_norms(network_, nullptr);
}

std::vector<at::Tensor> BatchNormSyncing::replica_tensors(std::vector<at::Tensor> parameters) const {
  if (!on_) return parameters;
  for (const at::Tensor& t : batch_norm_buffers(network_)) parameters.push_back(t);
  return parameters;
}

}  // namespace ft
