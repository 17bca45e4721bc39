// What the launcher (mpirun, srun) tells a process before MPI starts: its rank, for deciding who prints
// errors that every rank detects identically (configuration errors are reported before MPI_Init).
#pragma once

namespace ft {

// Rank from OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID; 0 when launched alone.
int launcher_rank();

}  // namespace ft
