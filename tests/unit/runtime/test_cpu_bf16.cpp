// Tests of the CPU bf16 reading: AMX over AVX512-BF16 over none, and oneDNN's ISA cap turning units off,
// on made-up flag sets standing in for Xeons, EPYCs and old CPUs.
#include <gtest/gtest.h>

#include "runtime/cpu_bf16.h"

namespace ft {
namespace {

const std::map<std::string, bool> kSapphireRapids = {
    {"avx512_f", true}, {"avx512_bf16", true}, {"amx_tile", true}, {"amx_bf16", true}};
const std::map<std::string, bool> kZen4 = {
    {"avx512_f", true}, {"avx512_bf16", true}, {"amx_tile", false}, {"amx_bf16", false}};
const std::map<std::string, bool> kSkylake = {{"avx512_f", true}, {"avx512_bf16", false}};

TEST(CpuBf16, PicksTheBestUnitTheCpuHas) {
  EXPECT_EQ(cpu_bf16_support(kSapphireRapids), CpuBf16::amx);
  EXPECT_EQ(cpu_bf16_support(kZen4), CpuBf16::avx512_bf16);
  EXPECT_EQ(cpu_bf16_support(kSkylake), CpuBf16::none);
  EXPECT_EQ(cpu_bf16_support({}), CpuBf16::none);
}

TEST(CpuBf16, OneDnnIsaCapDisablesUnitsAboveIt) {
  EXPECT_EQ(cpu_bf16_support(kSapphireRapids, "AVX2"), CpuBf16::none);
  EXPECT_EQ(cpu_bf16_support(kSapphireRapids, "avx512_core_bf16"), CpuBf16::avx512_bf16);
  EXPECT_EQ(cpu_bf16_support(kSapphireRapids, "AVX512_CORE_AMX"), CpuBf16::amx);
  EXPECT_EQ(cpu_bf16_support(kZen4, "avx512_core_vnni"), CpuBf16::none);
  EXPECT_EQ(cpu_bf16_support(kZen4, "ALL"), CpuBf16::avx512_bf16);
}

TEST(CpuBf16, DescriptionsNameTheUnit) {
  EXPECT_NE(describe(CpuBf16::amx).find("AMX"), std::string::npos);
  EXPECT_NE(describe(CpuBf16::avx512_bf16).find("AVX512-BF16"), std::string::npos);
  EXPECT_NE(describe(CpuBf16::none).find("emulated"), std::string::npos);
}

}  // namespace
}  // namespace ft
