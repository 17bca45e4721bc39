// The MPI datatype and summation operator for each fusetrain dtype. MPI has no 16-bit floating-point
// types, so fp16 and bf16 travel as contiguous 2-byte datatypes reduced by user-defined operators.
#pragma once

#include "comm/backend.h"
#include "runtime/mpi_check.h"

namespace ft {

struct MpiSum {
  MPI_Datatype type;
  MPI_Op op;
};

// Owns the 16-bit datatypes and their operators (created on construction, freed on destruction;
// MPI keeps them alive for any operation still using them). Not thread-safe to create: build it
// where the backend is built, then use it from any thread.
// Whether MPI's own operator sums `dtype` (MPI_SUM on a built-in type, which a CUDA-aware library can run on
// device memory); false for fp16 and bf16, whose operators are host functions of this file.
bool mpi_sums_natively(DType dtype);

class MpiSumTypes {
 public:
  MpiSumTypes();
  ~MpiSumTypes();
  MpiSumTypes(const MpiSumTypes&) = delete;
  MpiSumTypes& operator=(const MpiSumTypes&) = delete;

  MpiSum operator[](DType dtype) const;

 private:
  MPI_Datatype fp16_type_ = MPI_DATATYPE_NULL, bf16_type_ = MPI_DATATYPE_NULL;
  MPI_Op fp16_sum_ = MPI_OP_NULL, bf16_sum_ = MPI_OP_NULL;
};

}  // namespace ft
