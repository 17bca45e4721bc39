// Tests of write-then-rename output files (src/io/atomic_file.h): a committed file replaces the target,
// an abandoned one leaves the old target untouched and no temporary, and the writable-folder probe.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft {
namespace {

namespace fs = std::filesystem;

fs::path scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir =
      fs::path(ft::test::temp_dir()) / "io" / (std::string(info->test_suite_name()) + "." + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string contents(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(AtomicFile, CommitReplacesTheTargetAndRemovesTheTemporary) {
  const fs::path target = scratch_dir() / "results.h5";
  std::ofstream(target) << "old";
  {
    AtomicFile out(target.string());
    EXPECT_EQ(fs::path(out.temp_path()).parent_path(), target.parent_path());
    EXPECT_NE(out.temp_path().find(".partial-"), std::string::npos);
    std::ofstream(out.temp_path()) << "new";
    EXPECT_EQ(contents(target), "old");
    out.commit();
    EXPECT_FALSE(fs::exists(out.temp_path()));
  }
  EXPECT_EQ(contents(target), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(target.parent_path()), fs::directory_iterator()), 1);
}

TEST(AtomicFile, AbandonedWriteLeavesTheOldTargetAndNoTemporary) {
  const fs::path target = scratch_dir() / "results.h5";
  std::ofstream(target) << "old";
  std::string temp;
  {
    AtomicFile out(target.string());
    temp = out.temp_path();
    std::ofstream(temp) << "half written";
  }
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_EQ(contents(target), "old");
}

TEST(AtomicFile, CommitWithoutATemporaryNamesIt) {
  const fs::path target = scratch_dir() / "never.h5";
  AtomicFile out(target.string());
  try {
    out.commit();
    FAIL() << "commit of a missing temporary succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(out.temp_path()), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(target));
}

// The id of a process that has ended (a child reaped here), so that no process has it now.
pid_t ended_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) out.insert(entry.path().filename().string());
  return out;
}

// The rule from its definition: a file is removed when its name starts with "<target name>.partial-" and the
// number after that is the id of a process that no longer exists; every other file stays (process 1, init,
// exists whether or not this user may signal it).
TEST(AtomicFile, StaleTemporariesAreThoseOfEndedProcessesOnly) {
  const fs::path dir = scratch_dir();
  const std::string dead = std::to_string(ended_pid()), alive = std::to_string(::getpid());
  const std::set<std::string> removed = {"results.h5.partial-" + dead,
                                         "results.h5.partial-" + dead + "results.h5.partial-"};
  const std::set<std::string> kept = {"results.h5", "results.h5.partial-" + alive, "results.h5.partial-",
                                      "results.h5.partial-0", "results.h5.partial-1", "old-results.h5.partial-" + dead,
                                      "results.h5x.partial-" + dead, "results.h5.partia-" + dead};
  for (const auto& name : removed) std::ofstream(dir / name) << "x";
  for (const auto& name : kept) std::ofstream(dir / name) << "x";
  remove_stale_temporaries((dir / "results.h5").string());
  EXPECT_EQ(names_in(dir), kept);
  remove_stale_temporaries((dir / "absent" / "results.h5").string());  // a folder that is not there: nothing to do
}

TEST(AtomicFile, WritableDirectoryIsCreatedAndLeftClean) {
  const fs::path dir = scratch_dir() / "a" / "b";
  ensure_writable_directory(dir.string());
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(AtomicFile, UncreatableDirectoryIsNamed) {
  const fs::path file = scratch_dir() / "plain";
  std::ofstream(file) << "x";
  try {
    ensure_writable_directory((file / "sub").string());
    FAIL() << "a folder below a plain file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find((file / "sub").string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ft
