// The MPI world of a test process, shared by every test binary: a world of size 1 in the unit tests,
// every rank under mpirun. Created on first use and finalised at exit, so MPI is initialised only once.
#pragma once

#include "runtime/world.h"

namespace ft::test {

inline World& world() {
  static World world(nullptr, nullptr);
  return world;
}

}  // namespace ft::test
