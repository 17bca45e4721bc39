// model.sync_batchnorm on a replica: its BatchNorm layers attached to a backend of their own for one run, that
// backend's sums of CPU and GPU tensors, and the backend options every communicator of a run shares.
#include "train/batch_norm_sync.h"

#include <ATen/DeviceAccelerator.h>

#include <mutex>
#include <vector>

#include "comm/stall_inspector.h"
#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {
namespace {

// How many NCCL sums the host may enqueue ahead of the device before it waits for the oldest (about two
// ResNet-18 steps of BatchNorm layers).
constexpr std::size_t kMaxInFlight = 96;

DType wire_type(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return DType::kFloat32;
    case at::kDouble: return DType::kFloat64;
    default: throw Error(cat("synchronised BatchNorm sums float32 or float64 figures, not ", t));
  }
}

// A host buffer whose all-reduce was abandoned (a stall or a failed transfer): MPI may still write into it when the
// missing ranks arrive, so it is kept until the process ends, as the world keeps its timed-out requests' buffers.
void keep_abandoned(const at::Tensor& buffer) {
  static std::mutex mutex;
  static std::vector<at::Tensor>* kept = new std::vector<at::Tensor>();  // never freed: outlives every backend
  const std::lock_guard<std::mutex> lock(mutex);
  kept->push_back(buffer);
}

// Sums `host` (CPU memory) over the backend's ranks; on an error the buffer is kept before the error goes on.
void allreduce_host(Backend& backend, const at::Tensor& host) {
  try {
    backend.allreduce(host.data_ptr(), static_cast<std::size_t>(host.numel()), wire_type(host.scalar_type()));
  } catch (...) {
    keep_abandoned(host);
    throw;
  }
}

}  // namespace

void BackendNormSync::allreduce(at::Tensor& t, const char* what) {
  FT_CHECK(t.is_contiguous(), "synchronised BatchNorm sums a contiguous tensor");
  const CollectiveLabel label(what);
  if (!t.is_cuda()) {
    allreduce_host(backend_, t);
    return;
  }
  if (backend_.uses_device_memory()) {  // a failure aborts the NCCL communicator: nothing writes later
    const c10::Stream stream = at::accelerator::getCurrentStream(t.device().index());
    {
      const CollectiveTurn turn(order_, order_ ? order_->take() : 0, what);
      backend_.allreduce(t.data_ptr(), static_cast<std::size_t>(t.numel()), wire_type(t.scalar_type()),
                         stream.native_handle());
    }
    backend_.wait_in_flight(kMaxInFlight);
    return;
  }
  at::Tensor host = t.to(at::kCPU);  // waits for the device: MPI and Gloo read host memory
  allreduce_host(backend_, host);
  t.copy_(host);
}

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
                                   const at::Device& device, Backend* given, CollectiveOrder* order)
    : network_(network) {
  if (!config.model.sync_batchnorm || world.size() == 1) return;
  Backend* backend = given;
  if (!backend) {
    BackendOptions options = run_backend_options(config, device);
    options.allreduce = AllreduceAlgorithm::flat;  // a few kilobytes per layer: no hierarchy to gain from
    own_ = make_backend(world, options);
    backend = own_.get();
  }
  const int layers = synchronize_batch_norms(
      network_, std::make_shared<BackendNormSync>(*backend, backend->uses_device_memory() ? order : nullptr));
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
