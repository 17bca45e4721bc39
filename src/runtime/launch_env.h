// What the launcher (mpirun, srun) tells a process before MPI starts: its rank and local rank (who prints
// an error every rank detects alike, before MPI_Init) and whether all ranks share this node; and what a
// process tells the job script back: that the MPI world formed.
#pragma once

namespace ft {

// Rank from OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID; 0 when launched alone.
int launcher_rank();

// Rank among the ranks of this node (OMPI_COMM_WORLD_LOCAL_RANK or SLURM_LOCALID); 0 when launched alone.
int launcher_local_rank();

// Whether every rank runs on this node: Open MPI's world and local sizes agree, Slurm's step spans one
// node, or the process was launched alone. False when the launcher does not say.
bool launcher_one_node();

// Rank 0 writes the file named by FUSETRAIN_STARTED_FILE (nothing when unset or empty) once every rank has
// joined the MPI world: a launch that ended without it trained nothing, so the job script may launch again.
// A file that cannot be written is a warning on stderr, never an error of the run.
void report_world_formed(int rank, int size);

}  // namespace ft
