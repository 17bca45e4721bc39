// This host's CPU from ATen's cpuinfo capability map, reduced to what bf16 training needs; the decision
// itself is runtime/cpu_bf16's pure function.
#include "device/cpu_capabilities.h"

#include <ATen/cpu/Utils.h>

#include <cstdlib>
#include <map>

namespace ft {

HostCpu host_cpu() {
  HostCpu cpu;
  std::map<std::string, bool> flags;
  for (const auto& [key, value] : at::cpu::get_cpu_capabilities()) {
    if (value.isBool()) flags[key] = value.toBool();
    if (key == "cpu_name" && value.isString()) cpu.name = value.toStringRef();
  }
  if (const char* isa = std::getenv("ONEDNN_MAX_CPU_ISA")) cpu.max_isa = isa;
  cpu.bf16 = cpu_bf16_support(flags, cpu.max_isa);
  return cpu;
}

}  // namespace ft
