// Reads the launcher's rank variables (only before MPI_Init; afterwards World is the authority), preferring
// the MPI library's own variable over the scheduler's; writes the job script's world-formed file.
#include "runtime/launch_env.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

void report_world_formed(int rank, int size) {
  const char* path = std::getenv("FUSETRAIN_STARTED_FILE");
  if (rank != 0 || !path || !*path) return;
  std::FILE* file = std::fopen(path, "w");
  bool written = file != nullptr;
  if (file) written = (std::fprintf(file, "MPI world of %d rank(s) formed\n", size) > 0) & (std::fclose(file) == 0);
  if (!written)
    std::fprintf(stderr, "fusetrain: warning: cannot write FUSETRAIN_STARTED_FILE %s: %s\n", path, std::strerror(errno));
}

}  // namespace ft
