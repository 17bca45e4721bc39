// Tests of device/cpu_capabilities.cpp against the kernel's own view of this CPU (/proc/cpuinfo): the bf16 unit
// its flags give, the name ATen reports made of the model name's words, and ONEDNN_MAX_CPU_ISA's cap.
#include "device/cpu_capabilities.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

namespace ft {
namespace {

// The first value of `field` in /proc/cpuinfo ("" when absent).
std::string proc_cpuinfo(const std::string& field) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field, 0) == 0 && line.find(':') != std::string::npos) {
      const std::string value = line.substr(line.find(':') + 1);
      return value.empty() ? value : value.substr(1);
    }
  return "";
}

// ONEDNN_MAX_CPU_ISA cleared for a test and restored after it.
class HostCpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* value = std::getenv("ONEDNN_MAX_CPU_ISA")) saved_ = value;
    unsetenv("ONEDNN_MAX_CPU_ISA");
    if (proc_cpuinfo("flags").empty()) GTEST_SKIP() << "no /proc/cpuinfo flags on this host";
  }
  void TearDown() override {
    if (saved_) setenv("ONEDNN_MAX_CPU_ISA", saved_->c_str(), 1);
    else unsetenv("ONEDNN_MAX_CPU_ISA");
  }
  std::optional<std::string> saved_;
};

TEST_F(HostCpuTest, TheBf16UnitIsTheOneTheKernelsFlagsGive) {
  std::map<std::string, bool> flags;
  std::istringstream words(proc_cpuinfo("flags"));
  for (std::string flag; words >> flag;) flags[flag] = true;
  const HostCpu cpu = host_cpu();
  EXPECT_EQ(cpu.bf16, cpu_bf16_support(flags)) << describe(cpu.bf16) << " against /proc/cpuinfo's flags";
  EXPECT_EQ(cpu.max_isa, "");
}

TEST_F(HostCpuTest, TheNameIsMadeOfTheModelNamesWords) {
  const std::string model = proc_cpuinfo("model name");
  if (model.empty()) GTEST_SKIP() << "/proc/cpuinfo names no model";
  const std::string name = host_cpu().name;
  ASSERT_FALSE(name.empty()) << "the CPU is " << model;
  std::istringstream words(name);
  for (std::string word; words >> word;) EXPECT_NE(model.find(word), std::string::npos) << word << " of " << name;
}

TEST_F(HostCpuTest, AnIsaCapBelowAvx512TurnsTheUnitOff) {
  setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 1);
  const HostCpu cpu = host_cpu();
  EXPECT_EQ(cpu.max_isa, "AVX2");
  EXPECT_EQ(cpu.bf16, CpuBf16::none);
}

}  // namespace
}  // namespace ft
