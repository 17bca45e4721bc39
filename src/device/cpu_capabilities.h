// This host's CPU as ATen's cpuinfo sees it: its name and its bf16 unit (under ONEDNN_MAX_CPU_ISA), for
// `fusetrain info` and for the note a bf16 run on the CPU prints.
#pragma once

#include <string>

#include "runtime/cpu_bf16.h"

namespace ft {

struct HostCpu {
  std::string name;        // e.g. "Intel(R) Xeon(R) Platinum 8480+", "AMD EPYC"
  std::string max_isa;     // ONEDNN_MAX_CPU_ISA, "" when unset
  CpuBf16 bf16 = CpuBf16::none;
};

HostCpu host_cpu();

}  // namespace ft
