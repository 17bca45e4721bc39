// Reads the launcher's rank variables. Only used before MPI_Init; afterwards World is the authority.
// The order prefers the MPI library's own variable over the scheduler's.
#include "app/launch_env.h"

#include <cstdlib>

namespace ft {

int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}

}  // namespace ft
