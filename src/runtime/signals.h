// Cooperative stop requests: SIGUSR1 (SLURM's pre-emption warning), SIGTERM and SIGINT set a flag that
// the training loop polls between steps; it then checkpoints and exits with kExitResumable.
#pragma once

namespace ft {

// Exit status meaning "checkpointed on request, start me again to resume" (EX_TEMPFAIL).
constexpr int kExitResumable = 75;

void install_stop_handlers();
// The signal number that asked to stop, or 0.
int stop_requested();
// Forgets a handled request, for callers that continue in the same process after checkpointing.
void clear_stop_request();

}  // namespace ft
