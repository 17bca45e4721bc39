// The training-step throughput benchmark: the driver relaunches fusetrain under mpirun for each world
// size and reports images/s and scaling efficiency; the worker runs timed steps on synthetic data.
#pragma once

namespace ft {
int bench_step(int argc, char** argv);
int bench_step_worker(int argc, char** argv);
}
