// gethostname wrapped once, so that every caller reads the name the same way and picks its own stand-in
// for a host that gives none.
#include "runtime/host_name.h"

#include <unistd.h>

namespace ft {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

}  // namespace ft
