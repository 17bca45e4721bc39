// What a CPU offers for bf16 training, from its instruction-set flags: AMX tiles, AVX512-BF16 dot products
// or neither (oneDNN then emulates bf16 in fp32); `fusetrain info` and bf16 runs on the CPU name it.
#pragma once

#include <map>
#include <string>

namespace ft {

enum class CpuBf16 { amx, avx512_bf16, none };

// flags: cpuinfo names (amx_bf16, amx_tile, avx512_bf16, ...) to whether the CPU has them.
// max_isa: the value of ONEDNN_MAX_CPU_ISA ("" when unset); a cap below the unit's ISA disables it.
CpuBf16 cpu_bf16_support(const std::map<std::string, bool>& flags, const std::string& max_isa = "");

// One line for people: "AMX (bf16 matrix tiles)", "AVX512-BF16 (no AMX)" or "none: ...".
std::string describe(CpuBf16 support);

}  // namespace ft
