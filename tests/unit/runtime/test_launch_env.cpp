// Tests of runtime/launch_env.cpp: each launcher variable alone, their order of preference, the one-node rule
// at each of its branches, and the world-formed file (rank 0 only, unset or empty, unwritable, full).
#include "runtime/launch_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <unistd.h>

namespace ft {
namespace {

// Every variable the launcher functions read, cleared for the test and restored after it.
class LaunchEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kNames) {
      if (const char* value = std::getenv(name)) saved_[name] = value;
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (const char* name : kNames) {
      const auto found = saved_.find(name);
      if (found == saved_.end()) unsetenv(name);
      else setenv(name, found->second.c_str(), 1);
    }
  }
  static void set(const char* name, const char* value) { setenv(name, value, 1); }

  static constexpr const char* kNames[] = {
      "OMPI_COMM_WORLD_RANK", "PMIX_RANK",       "PMI_RANK",    "SLURM_PROCID", "OMPI_COMM_WORLD_LOCAL_RANK",
      "MPI_LOCALRANKID",      "SLURM_LOCALID",   "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
      "SLURM_STEP_NUM_NODES", "FUSETRAIN_STARTED_FILE"};
  std::map<std::string, std::string> saved_;
};

TEST_F(LaunchEnv, AloneIsRankZeroOnOneNode) {
  EXPECT_EQ(launcher_rank(), 0);
  EXPECT_EQ(launcher_local_rank(), 0);
  EXPECT_TRUE(launcher_one_node());
}

TEST_F(LaunchEnv, EachRankVariableAloneIsRead) {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    set(name, "3");
    EXPECT_EQ(launcher_rank(), 3) << name;
    unsetenv(name);
  }
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    set(name, "2");
    EXPECT_EQ(launcher_local_rank(), 2) << name;
    unsetenv(name);
  }
}

TEST_F(LaunchEnv, TheMpiLibrarysOwnVariableWins) {
  set("OMPI_COMM_WORLD_RANK", "1"), set("PMIX_RANK", "2"), set("PMI_RANK", "3"), set("SLURM_PROCID", "4");
  EXPECT_EQ(launcher_rank(), 1);
  unsetenv("OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(launcher_rank(), 2);
  unsetenv("PMIX_RANK");
  EXPECT_EQ(launcher_rank(), 3);
  set("OMPI_COMM_WORLD_LOCAL_RANK", "5"), set("MPI_LOCALRANKID", "6"), set("SLURM_LOCALID", "7");
  EXPECT_EQ(launcher_local_rank(), 5);
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_EQ(launcher_local_rank(), 6);
}

TEST_F(LaunchEnv, OpenMpisSizesDecideWhenBothAreSet) {
  set("OMPI_COMM_WORLD_RANK", "0");
  set("OMPI_COMM_WORLD_SIZE", "4"), set("OMPI_COMM_WORLD_LOCAL_SIZE", "4");
  EXPECT_TRUE(launcher_one_node());
  set("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
  EXPECT_FALSE(launcher_one_node());
  set("SLURM_STEP_NUM_NODES", "1");  // Open MPI's own sizes come first
  EXPECT_FALSE(launcher_one_node());
}

TEST_F(LaunchEnv, OneOpenMpiSizeAloneFallsToSlurmsNodeCount) {
  set("SLURM_PROCID", "0");
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"}) {
    set(name, "4");
    set("SLURM_STEP_NUM_NODES", "1");
    EXPECT_TRUE(launcher_one_node()) << name;
    set("SLURM_STEP_NUM_NODES", "2");
    EXPECT_FALSE(launcher_one_node()) << name;
    unsetenv("SLURM_STEP_NUM_NODES");
    EXPECT_FALSE(launcher_one_node()) << name << " with a rank variable and no node count";
    unsetenv(name);
  }
}

TEST_F(LaunchEnv, ARankVariableWithoutSizesIsNotOneNode) {
  for (const char* name : {"PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    set(name, "0");
    EXPECT_FALSE(launcher_one_node()) << name;
    unsetenv(name);
  }
  EXPECT_TRUE(launcher_one_node());
}

// The world-formed file: FUSETRAIN_STARTED_FILE in a fresh folder of its own.
class WorldFormed : public LaunchEnv {
 protected:
  void SetUp() override {
    LaunchEnv::SetUp();
    dir_ = std::filesystem::temp_directory_path() /
           ("fusetrain-world-formed-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "run.started").string();
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    LaunchEnv::TearDown();
  }
  std::string contents() const {
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(WorldFormed, RankZeroWritesTheFileNamingTheWorldSize) {
  set("FUSETRAIN_STARTED_FILE", path_.c_str());
  ::testing::internal::CaptureStderr();
  report_world_formed(0, 4);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(contents(), "MPI world of 4 rank(s) formed\n");
  report_world_formed(0, 1);  // a relaunch in the same place replaces it
  EXPECT_EQ(contents(), "MPI world of 1 rank(s) formed\n");
}

TEST_F(WorldFormed, OtherRanksWriteNothing) {
  set("FUSETRAIN_STARTED_FILE", path_.c_str());
  for (int rank : {1, 3}) report_world_formed(rank, 4);
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(WorldFormed, NothingIsWrittenWhenTheVariableIsUnsetOrEmpty) {
  report_world_formed(0, 2);
  set("FUSETRAIN_STARTED_FILE", "");
  report_world_formed(0, 2);
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

TEST_F(WorldFormed, AnUnwritablePathIsAWarningNamingIt) {
  const std::string missing = (dir_ / "no-such-folder" / "run.started").string();
  set("FUSETRAIN_STARTED_FILE", missing.c_str());
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(report_world_formed(0, 2));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("warning: cannot write FUSETRAIN_STARTED_FILE " + missing + ": No such file or directory"),
            std::string::npos)
      << err;
  EXPECT_FALSE(std::filesystem::exists(missing));
}

// /dev/full takes the line into the stream's buffer and refuses it when the file is closed.
TEST_F(WorldFormed, AWriteRefusedAtCloseIsAWarning) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  set("FUSETRAIN_STARTED_FILE", "/dev/full");
  ::testing::internal::CaptureStderr();
  report_world_formed(0, 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cannot write FUSETRAIN_STARTED_FILE /dev/full: No space left on device"), std::string::npos) << err;
}

}  // namespace
}  // namespace ft
