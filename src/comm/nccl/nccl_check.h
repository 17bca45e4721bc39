// Checks every NCCL call: a failure becomes an ft::Error naming the call, NCCL's error string and its
// last error message, with file and line. Communicators here are nonblocking, so "in progress" is success.
#pragma once

#include <nccl.h>

#include "comm/backend.h"
#include "runtime/error.h"

namespace ft {

inline std::string nccl_failure(const char* call, ncclResult_t result, ncclComm_t comm) {
  const char* last = ncclGetLastError(comm);
  return cat("NCCL call failed: ", call, ": ", ncclGetErrorString(result),
             last && *last ? cat(" (", last, ")") : std::string());
}

// An asynchronous error of a communicator (ncclCommGetAsyncError): NCCL reports a peer whose process exited or
// whose connection it lost as a remote error, and its sockets' failures as system errors; both mean a peer is
// gone. Anything else (invalid usage, an internal or a CUDA error) is this rank's own failure.
inline TransportFailure nccl_async_failure(ncclResult_t state, ncclComm_t comm) {
  return {state == ncclRemoteError || state == ncclSystemError, nccl_failure("asynchronous NCCL error", state, comm)};
}

}  // namespace ft

// For calls that complete before returning (no communicator involved, or a blocking one).
#define FT_CHECK_NCCL(call)                                                                        \
  do {                                                                                             \
    const ncclResult_t ft_nccl_rc_ = (call);                                                       \
    if (ft_nccl_rc_ != ncclSuccess)                                                                \
      ::ft::throw_error(__FILE__, __LINE__, ::ft::nccl_failure(#call, ft_nccl_rc_, nullptr));    \
  } while (0)

// For calls on a nonblocking communicator `comm`: ncclInProgress means "posted, poll the communicator".
#define FT_CHECK_NCCL_ASYNC(call, comm)                                                            \
  do {                                                                                             \
    const ncclResult_t ft_nccl_rc_ = (call);                                                       \
    if (ft_nccl_rc_ != ncclSuccess && ft_nccl_rc_ != ncclInProgress)                               \
      ::ft::throw_error(__FILE__, __LINE__, ::ft::nccl_failure(#call, ft_nccl_rc_, (comm)));     \
  } while (0)
