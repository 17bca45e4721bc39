// One MPI world per unit-test process (MPI can be initialised only once), shared by every test that
// needs collectives; with a single process it is a world of size 1.
#pragma once

#include "runtime/world.h"

namespace ft {

inline World& test_world() {
  static int argc = 1;
  static char name[] = "unit_tests";
  static char* args[] = {name, nullptr};
  static char** argv = args;
  static World world(&argc, &argv);
  return world;
}

}  // namespace ft
