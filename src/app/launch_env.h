// What the launcher (mpirun, srun) tells a process before MPI starts: its rank, for deciding who prints
// errors that every rank detects identically (configuration errors are reported before MPI_Init).
#pragma once

namespace ft {

// Rank from OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID; 0 when launched alone.
int launcher_rank();

// Rank among the ranks of this node (OMPI_COMM_WORLD_LOCAL_RANK or SLURM_LOCALID); 0 when launched alone.
int launcher_local_rank();

// Whether every rank runs on this node: Open MPI's world and local sizes agree, Slurm's step spans one
// node, or the process was launched alone. False when the launcher does not say.
bool launcher_one_node();

}  // namespace ft
