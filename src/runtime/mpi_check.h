// Checks the return code of every MPI call and turns a failure into an ft::Error with file and line.
// Include this instead of <mpi.h> so that the C++ bindings stay disabled everywhere.
#pragma once

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "runtime/error.h"

namespace ft {
std::string mpi_error_string(int code);
}

#define FT_CHECK_MPI(call)                                                                 \
  do {                                                                                     \
    const int ft_mpi_rc_ = (call);                                                         \
    if (ft_mpi_rc_ != MPI_SUCCESS)                                                         \
      ::ft::throw_error(__FILE__, __LINE__,                                                \
                        ::ft::cat("MPI call failed: ", #call, ": ", ::ft::mpi_error_string(ft_mpi_rc_))); \
  } while (0)
