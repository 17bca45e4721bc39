// What the launcher (mpirun, srun) tells a process before MPI starts: its rank and local rank (who prints
// an error every rank detects alike, before MPI_Init) and whether all ranks share this node.
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
