// Names of the step phases, as they appear in results files, reports and timelines.
// Kept beside the enum so a new phase cannot be added without a name.
#include "monitor/timer.h"

namespace ft {

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kData: return "data";
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kCommWait: return "comm_wait";
    case Phase::kOptimizer: return "optimizer";
    case Phase::kEval: return "eval";
    case Phase::kCount: break;
  }
  return "?";
}

}  // namespace ft
