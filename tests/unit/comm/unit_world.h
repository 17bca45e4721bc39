// The MPI world of the unit-test process: one rank (MPI singleton), created on first use and finalised
// at exit, shared by every test that needs a World so that MPI is initialised exactly once.
#pragma once

#include "runtime/world.h"

namespace ft::test {

inline const World& unit_world() {
  static World world(nullptr, nullptr);
  return world;
}

}  // namespace ft::test
