// Reads the launcher's rank variables. Only used before MPI_Init; afterwards World is the authority.
// The order prefers the MPI library's own variable over the scheduler's.
#include "runtime/launch_env.h"

#include <cstdlib>
#include <initializer_list>
#include <string>

namespace ft {
namespace {

const char* first_set(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const char* value = std::getenv(name)) return value;
  return nullptr;
}

}  // namespace

int launcher_rank() {
  const char* value = first_set({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"});
  return value ? std::atoi(value) : 0;
}

int launcher_local_rank() {
  const char* value = first_set({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
  return value ? std::atoi(value) : 0;
}

bool launcher_one_node() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (size && local) return std::string(size) == local;
  if (const char* nodes = std::getenv("SLURM_STEP_NUM_NODES")) return std::string(nodes) == "1";
  return !first_set({"PMIX_RANK", "PMI_RANK", "SLURM_PROCID"});
}

}  // namespace ft
