// Dtype facts and the factory that picks a collective backend by name, saying plainly when the one
// asked for was not compiled into this binary and how to get it.
#include "comm/backend.h"

#include <cstdint>

#include "comm/mpi_backend.h"
#include "comm/span_staging.h"
#include "runtime/world.h"
#ifdef FUSETRAIN_WITH_GLOO
#include "comm/gloo/gloo_backend.h"
#endif
#ifdef FUSETRAIN_WITH_NCCL
#include "comm/nccl/nccl_backend.h"
#endif

namespace ft {

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16: return 2;
    case DType::kFloat32:
    case DType::kInt32: return 4;
    case DType::kFloat64:
    case DType::kInt64: return 8;
    case DType::kUInt8: return 1;
  }
  throw Error(cat("unknown dtype ", static_cast<int>(dtype)));
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
  }
  throw Error(cat("unknown dtype ", static_cast<int>(dtype)));
}

void Backend::allreduce_spans(const std::vector<HostSpan>& spans, DType dtype) {
  std::size_t non_empty = 0;
  for (const HostSpan& span : spans) non_empty += span.count > 0;
  if (non_empty == 1) {
    for (const HostSpan& span : spans)
      if (span.count > 0) allreduce(span.data, span.count, dtype);
    return;
  }
  SpanStaging staging(spans, dtype_size(dtype), SIZE_MAX);
  if (staging.total_count() == 0) return;
  staging.gather();
  allreduce(staging.regions().front().data, staging.total_count(), dtype);
  staging.scatter();
}

std::unique_ptr<Backend> make_backend(const World& world, const BackendOptions& options) {
  FT_REQUIRE(options.stall_timeout_s > 0, "the stall timeout must be positive seconds, got ",
             options.stall_timeout_s);
  switch (options.name) {
    case BackendName::mpi: return std::make_unique<MpiBackend>(world, options);
    case BackendName::gloo:
#ifdef FUSETRAIN_WITH_GLOO
      return std::make_unique<GlooBackend>(world, options);
#else
      throw Error("backend 'gloo' is not built into this fusetrain (rebuild with libgloo-dev)");
#endif
    case BackendName::nccl:
#ifdef FUSETRAIN_WITH_NCCL
      return std::make_unique<NcclBackend>(world, options);
#else
      throw Error("backend 'nccl' is not built into this fusetrain (rebuild on a host with the CUDA toolkit "
                  "and NCCL: nvcc, nccl.h and libnccl)");
#endif
  }
  throw Error(cat("unknown communication backend ", static_cast<int>(options.name)));
}

}  // namespace ft
