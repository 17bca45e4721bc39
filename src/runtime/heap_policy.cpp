// keep_freed_memory: glibc's default returns freed blocks above 128 KiB (a dynamic threshold) to the
// kernel, so every step page-faults its activations back in; a training loop wants them kept.
#include "runtime/heap_policy.h"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ft {
namespace {

std::string& description() {
  static std::string text;
  return text;
}

}  // namespace

bool environment_tunes_malloc(const char* glibc_tunables, const char* mmap_threshold, const char* trim_threshold) {
  const bool tunables = glibc_tunables && std::strstr(glibc_tunables, "glibc.malloc.");
  return tunables || (mmap_threshold && *mmap_threshold) || (trim_threshold && *trim_threshold);
}

std::string keep_freed_memory() {
#if defined(__GLIBC__)
  if (environment_tunes_malloc(std::getenv("GLIBC_TUNABLES"), std::getenv("MALLOC_MMAP_THRESHOLD_"),
                               std::getenv("MALLOC_TRIM_THRESHOLD_")))
    description() = "glibc malloc as the environment tunes it";
  else if (mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHeapMmapThreshold)) == 1 &&
           mallopt(M_TRIM_THRESHOLD, -1) == 1)  // -1: the largest value, never trim
    description() = "freed blocks under 32 MiB kept for reuse (glibc malloc, no trimming)";
  else
    description() = "glibc malloc defaults (mallopt refused the policy)";
#else
  description() = "the C library's malloc defaults (not glibc)";
#endif
  return description();
}

const std::string& heap_policy_description() { return description(); }

}  // namespace ft
