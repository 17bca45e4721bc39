// Thread discovery through /proc/self/task and SCHED_BATCH through sched_setscheduler, which on Linux
// applies to the single thread whose kernel id it is given.
#include "runtime/thread_policy.h"

#include <dirent.h>
#include <sched.h>

#include <cstdlib>

namespace ft {

std::set<long> process_thread_ids() {
  std::set<long> ids;
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return ids;
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long id = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0') ids.insert(id);
  }
  closedir(dir);
  return ids;
}

std::set<long> threads_started_by(const std::function<void()>& start) {
  const std::set<long> before = process_thread_ids();
  start();
  std::set<long> started;
  for (long id : process_thread_ids())
    if (!before.count(id)) started.insert(id);
  return started;
}

bool set_batch_scheduling(long tid) {
  sched_param param{};
  param.sched_priority = 0;
  return sched_setscheduler(static_cast<pid_t>(tid), SCHED_BATCH, &param) == 0;
}

}  // namespace ft
