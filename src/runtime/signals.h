// Cooperative stop requests: SIGUSR1 (SLURM's pre-emption warning), SIGTERM and SIGINT set a flag that
// the training loop polls between steps; it then checkpoints and exits with kExitResumable.
#pragma once

#include <cstdint>

namespace ft {

// Exit status meaning "checkpointed on request, start me again to resume" (EX_TEMPFAIL).
constexpr int kExitResumable = 75;
// Exit status meaning "a rank was lost (dead or hung, named in the error): start me again, on the nodes that
// are left, to resume from the last checkpoint" (EX_PROTOCOL). The job scripts requeue on both.
constexpr int kExitRankLost = 76;

void install_stop_handlers();
// The signal number that asked to stop, or 0.
int stop_requested();
// stop_requested(), or SIGUSR1 when the test aid FUSETRAIN_TEST_STOP_AT_STEP=N is set and exactly N
// optimizer steps of the run are done: tests stop a run at a chosen step instead of racing a signal.
int stop_requested_after(std::int64_t completed_steps);
// Forgets a handled request, for callers that continue in the same process after checkpointing.
void clear_stop_request();

}  // namespace ft
