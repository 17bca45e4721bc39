// What a CPU offers for bf16 training: a pure reading of instruction-set flags and of oneDNN's ISA cap,
// so hosts of every kind are testable on any one of them.
#include "runtime/cpu_bf16.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace ft {
namespace {

bool has(const std::map<std::string, bool>& flags, const char* name) {
  const auto it = flags.find(name);
  return it != flags.end() && it->second;
}

// oneDNN's ISA names, lowest first (ONEDNN_MAX_CPU_ISA takes any of them, case-insensitive).
int isa_rank(std::string isa) {
  std::transform(isa.begin(), isa.end(), isa.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::vector<std::string> order = {"sse41", "avx", "avx2", "avx2_vnni", "avx2_vnni_2",
                                                 "avx512_core", "avx512_core_vnni", "avx512_core_bf16",
                                                 "avx10_1_512", "avx512_core_fp16", "avx10_1_512_amx",
                                                 "avx512_core_amx", "avx10_1_512_amx_fp16",
                                                 "avx512_core_amx_fp16", "avx10_2_512", "avx10_2_512_amx_2",
                                                 "default", "all"};
  const auto it = std::find(order.begin(), order.end(), isa);
  return it == order.end() ? static_cast<int>(order.size()) : static_cast<int>(it - order.begin());
}

}  // namespace

CpuBf16 cpu_bf16_support(const std::map<std::string, bool>& flags, const std::string& max_isa) {
  const int cap = max_isa.empty() ? isa_rank("all") : isa_rank(max_isa);
  if (has(flags, "amx_bf16") && has(flags, "amx_tile") && cap >= isa_rank("avx10_1_512_amx")) return CpuBf16::amx;
  if (has(flags, "avx512_bf16") && cap >= isa_rank("avx512_core_bf16")) return CpuBf16::avx512_bf16;
  return CpuBf16::none;
}

std::string describe(CpuBf16 support) {
  switch (support) {
    case CpuBf16::amx: return "AMX (bf16 matrix tiles)";
    case CpuBf16::avx512_bf16: return "AVX512-BF16 (bf16 dot products, no AMX)";
    case CpuBf16::none: return "none (bf16 is emulated in fp32: slower than fp32 here)";
  }
  return "none";
}

}  // namespace ft
