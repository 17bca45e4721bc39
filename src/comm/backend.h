// The collective-communication interface that the gradient engine and metric reduction use, with one
// implementation per transport (MPI, Gloo, NCCL). Buffers are raw memory plus a dtype: no LibTorch here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/choices.h"

namespace ft {

class World;

enum class DType { kFloat16, kBFloat16, kFloat32, kFloat64, kInt32, kInt64, kUInt8 };

std::size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);

// Thrown when a collective has waited longer than the stall timeout; the message names the ranks.
class StallError;
class CollectiveWatch;

// `count` elements of host memory at `data`: one piece of a list that is reduced as one vector.
struct HostSpan {
  void* data;
  std::size_t count;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // True when collectives take device (GPU) pointers directly.
  virtual bool uses_device_memory() const = 0;

  // In-place element-wise sum over all ranks of `count` elements at `data`.
  // `stream` is a cudaStream_t for device backends and ignored otherwise.
  virtual void allreduce(void* data, std::size_t count, DType dtype, void* stream = nullptr) = 0;
  // In-place element-wise sum over all ranks of the concatenation of `spans` (host memory; every rank
  // passes the same counts in the same order). This default copies them into one buffer and back;
  // backends that reduce scattered memory where it lies override it and reduces_spans_in_place().
  virtual void allreduce_spans(const std::vector<HostSpan>& spans, DType dtype);
  // True when allreduce_spans leaves large spans in place (only small ones are staged).
  virtual bool reduces_spans_in_place() const { return false; }
  // Copies `bytes` at `data` on `root` to every rank.
  virtual void broadcast(void* data, std::size_t bytes, int root, void* stream = nullptr) = 0;
  // Gathers `bytes` from every rank into `out` (size() * bytes), ordered by rank.
  virtual void allgather(const void* in, void* out, std::size_t bytes, void* stream = nullptr) = 0;
  virtual void barrier() = 0;
  // The stall inspector that numbers this backend's collectives, so that the world's control collectives
  // can be numbered and diagnosed with them (World::set_watch); nullptr when there is none.
  virtual CollectiveWatch* watch() { return nullptr; }

  int rank() const { return rank_; }
  int size() const { return size_; }

 protected:
  Backend(int rank, int size) : rank_(rank), size_(size) {}
  int rank_, size_;
};

struct BackendOptions {
  BackendName name = BackendName::mpi;  // distributed.backend
  double stall_timeout_s = 60;   // a collective not finished by then throws StallError
  int cuda_device = -1;          // nccl: the device this rank drives
};

// Creates the backend named in options over `world` (collective: every rank must call it).
// Throws ft::Error for a backend not built into this binary.
std::unique_ptr<Backend> make_backend(const World& world, const BackendOptions& options);

}  // namespace ft
