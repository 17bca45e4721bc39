// Checks every CUDA runtime call and kernel launch: a failure becomes an ft::Error naming the call,
// the CUDA error string, and the file and line.
#pragma once

#include <cuda_runtime.h>

#include "runtime/error.h"

#define FT_CHECK_CUDA(call)                                                                     \
  do {                                                                                          \
    const cudaError_t ft_cuda_rc_ = (call);                                                     \
    if (ft_cuda_rc_ != cudaSuccess)                                                             \
      ::ft::throw_error(__FILE__, __LINE__, ::ft::cat("CUDA call failed: ", #call, ": ",       \
                                                      cudaGetErrorString(ft_cuda_rc_)));      \
  } while (0)

// After a <<<...>>> launch: catches bad launch configurations immediately.
#define FT_CHECK_LAUNCH() FT_CHECK_CUDA(cudaGetLastError())
