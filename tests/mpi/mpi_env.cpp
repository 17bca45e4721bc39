// The backend cache behind mpi_env.h. main() releases the backends before the world is finalised at
// exit, so that their communicators and heartbeat threads are gone before MPI_Finalize.
#include "mpi_env.h"

#include <map>

namespace ft::test {
namespace {

std::map<std::string, std::unique_ptr<Backend>> g_backends;

}  // namespace

Backend& shared_backend(const std::string& name) {
  auto& slot = g_backends[name];
  if (!slot) {
    BackendOptions options;
    options.name = choice_from<BackendName>("backend", name);
    options.stall_timeout_s = 20;
    slot = make_backend(world(), options);
  }
  return *slot;
}

void release_shared_backends() { g_backends.clear(); }

}  // namespace ft::test
