// Host heap policy: memory that tensors free stays inside the process, so the large buffers of one
// training step are reused by the next instead of being unmapped and faulted in (and zeroed) again.
#pragma once

#include <cstddef>
#include <string>

namespace ft {

// Blocks below this size come from the heap; larger ones are still mapped and unmapped one by one.
constexpr std::size_t kHeapMmapThreshold = std::size_t{32} << 20;

// True when the environment already tunes glibc malloc (GLIBC_TUNABLES naming glibc.malloc, or
// MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_): then the user's setting is left as it is.
bool environment_tunes_malloc(const char* glibc_tunables, const char* mmap_threshold, const char* trim_threshold);

// Serves blocks below kHeapMmapThreshold from the heap and never gives its free top back to the
// kernel (glibc mallopt), unless the environment tunes malloc itself or the C library is not glibc.
// Call first thing in main, before any large allocation. Returns what it did, for `fusetrain info`.
std::string keep_freed_memory();

// What keep_freed_memory() did in this process ("" before it ran).
const std::string& heap_policy_description();

}  // namespace ft
