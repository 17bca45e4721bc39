// Whether this process's standard output reaches a terminal, seen through the launcher: Open MPI gives
// every rank a pseudo-terminal of its own whatever mpirun's output is, so there mpirun's output decides.
#pragma once

namespace ft {

// isatty(stdout); under Open MPI (OMPI_COMM_WORLD_SIZE set) and a pseudo-terminal, whether the parent
// process's (mpirun's) standard output is a terminal: `mpirun ... > log` or a Slurm output file is not.
bool stdout_is_terminal();
// Columns of the terminal on standard output, 0 when unknown.
int terminal_columns();

}  // namespace ft
