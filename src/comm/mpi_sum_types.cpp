// fp16/bf16 summation for MPI: each reduction step widens both operands to float, adds, and rounds
// back to nearest even (comm/half.h), the same arithmetic as the Gloo backend, so results agree.
#include "comm/mpi_sum_types.h"

#include <cstdint>
#include <cstdio>

#include "comm/half.h"

namespace ft {
namespace {

void fp16_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* acc = static_cast<std::uint16_t*>(inout);
  sum_fp16(acc, acc, static_cast<const std::uint16_t*>(in), static_cast<std::size_t>(*len));
}

void bf16_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* acc = static_cast<std::uint16_t*>(inout);
  sum_bf16(acc, acc, static_cast<const std::uint16_t*>(in), static_cast<std::size_t>(*len));
}

}  // namespace

MpiSumTypes::MpiSumTypes() {
  FT_CHECK_MPI(MPI_Type_contiguous(2, MPI_BYTE, &fp16_type_));
  FT_CHECK_MPI(MPI_Type_commit(&fp16_type_));
  FT_CHECK_MPI(MPI_Type_contiguous(2, MPI_BYTE, &bf16_type_));
  FT_CHECK_MPI(MPI_Type_commit(&bf16_type_));
  FT_CHECK_MPI(MPI_Op_create(&fp16_sum, 1, &fp16_sum_));
  FT_CHECK_MPI(MPI_Op_create(&bf16_sum, 1, &bf16_sum_));
}

MpiSumTypes::~MpiSumTypes() {
  try {
    FT_CHECK_MPI(MPI_Op_free(&fp16_sum_));
    FT_CHECK_MPI(MPI_Op_free(&bf16_sum_));
    FT_CHECK_MPI(MPI_Type_free(&fp16_type_));
    FT_CHECK_MPI(MPI_Type_free(&bf16_type_));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusetrain: warning: freeing MPI fp16/bf16 types: %s\n", e.what());
  }
}

bool mpi_sums_natively(DType dtype) { return dtype != DType::kFloat16 && dtype != DType::kBFloat16; }

MpiSum MpiSumTypes::operator[](DType dtype) const {
  switch (dtype) {
    case DType::kFloat16: return {fp16_type_, fp16_sum_};
    case DType::kBFloat16: return {bf16_type_, bf16_sum_};
    case DType::kFloat32: return {MPI_FLOAT, MPI_SUM};
    case DType::kFloat64: return {MPI_DOUBLE, MPI_SUM};
    case DType::kInt32: return {MPI_INT32_T, MPI_SUM};
    case DType::kInt64: return {MPI_INT64_T, MPI_SUM};
    case DType::kUInt8: return {MPI_UINT8_T, MPI_SUM};
  }
  throw Error(cat("no MPI type for dtype ", static_cast<int>(dtype)));
}

}  // namespace ft
