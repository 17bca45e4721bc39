// The host-memory backends compiled into this build, for tests that run a case over each of them: "mpi",
// and "gloo" where it is built. Shared by the MPI test binaries.
#pragma once

#include <string>
#include <vector>

namespace ft::test {

inline std::vector<std::string> host_backends() {
#ifdef FUSETRAIN_WITH_GLOO
  return {"mpi", "gloo"};
#else
  return {"mpi"};
#endif
}

}  // namespace ft::test
