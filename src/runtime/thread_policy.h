// Finds the threads a library starts inside this process and sets their Linux scheduling policy, for
// helper threads (such as Gloo's TCP event loop) that fusetrain cannot configure through the library.
#pragma once

#include <functional>
#include <set>

namespace ft {

// Kernel thread ids of this process's threads (/proc/self/task); empty where that is not readable.
std::set<long> process_thread_ids();

// Runs `start` and returns the ids of the threads that appeared meanwhile (threads that the call
// started, or that another thread of this process started at the same moment).
std::set<long> threads_started_by(const std::function<void()>& start);

// Moves thread `tid` of this process to SCHED_BATCH: still fair-shared, but a wake-up of it no longer
// preempts the running thread. Returns false (and changes nothing) when the kernel refuses.
bool set_batch_scheduling(long tid);

}  // namespace ft
