// The project's path helpers against what the code relies on: lexical results as std::filesystem gives
// them, directory creation and removal, listings, and errors that name the path.
#include <gtest/gtest.h>

#include <fstream>

#include "io/paths.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft {
namespace {

std::string scratch() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = paths::join(ft::test::temp_dir(), cat("paths/", info->name()));
  paths::remove_all(dir);
  paths::create_directories(dir);
  return dir;
}

TEST(Paths, LexicalOperations) {
  EXPECT_EQ(paths::join("a", "b"), "a/b");
  EXPECT_EQ(paths::join("a/", "b"), "a/b");
  EXPECT_EQ(paths::join("a", "/abs"), "/abs");
  EXPECT_EQ(paths::join("", "b"), "b");
  EXPECT_EQ(paths::parent("a/b/c.h5"), "a/b");
  EXPECT_EQ(paths::parent("c.h5"), "");
  EXPECT_EQ(paths::parent("/c"), "/");
  EXPECT_EQ(paths::filename("a/b/c.h5"), "c.h5");
  EXPECT_EQ(paths::filename("data/cifar10/"), "cifar10");
  EXPECT_EQ(paths::stem("a/b/run.ckpt"), "run");
  EXPECT_EQ(paths::stem("a/.hidden"), ".hidden");
  EXPECT_EQ(paths::normal("a/../b/./c/"), "b/c");
  EXPECT_EQ(paths::normal("/x/../../y"), "/y");
  EXPECT_EQ(paths::normal("../a"), "../a");
  EXPECT_EQ(paths::normal("."), ".");
  EXPECT_EQ(paths::absolute("/a/b/../c"), "/a/c");
  EXPECT_EQ(paths::absolute("rel"), paths::join(paths::current_dir(), "rel"));
}

TEST(Paths, CreateListAndRemove) {
  const std::string dir = scratch();
  paths::create_directories(paths::join(dir, "x/y/z"));
  EXPECT_TRUE(paths::is_directory(paths::join(dir, "x/y/z")));
  std::ofstream(paths::join(dir, "x/b.txt")) << "bb";
  std::ofstream(paths::join(dir, "x/y/a.txt")) << "a";
  EXPECT_TRUE(paths::is_regular_file(paths::join(dir, "x/b.txt")));
  EXPECT_EQ(paths::file_size(paths::join(dir, "x/b.txt")), 2u);
  EXPECT_EQ(paths::list_directory(paths::join(dir, "x")), (std::vector<std::string>{"b.txt", "y"}));
  paths::rename(paths::join(dir, "x/b.txt"), paths::join(dir, "c.txt"));
  EXPECT_TRUE(paths::remove(paths::join(dir, "c.txt")));
  EXPECT_FALSE(paths::remove(paths::join(dir, "c.txt")));
  paths::remove_all(paths::join(dir, "x"));
  EXPECT_FALSE(paths::exists(paths::join(dir, "x")));
  paths::remove_all(paths::join(dir, "never"));  // absent: fine
}

TEST(Paths, ErrorsNameThePathAndTheReason) {
  const std::string dir = scratch();
  const std::string file = paths::join(dir, "plain");
  std::ofstream(file) << "x";
  EXPECT_EQ(paths::try_create_directories(paths::join(file, "sub")), "Not a directory");
  try {
    paths::create_directories(paths::join(file, "sub"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(paths::join(file, "sub")), std::string::npos) << e.what();
  }
  EXPECT_THROW(paths::list_directory(paths::join(dir, "absent")), Error);
  EXPECT_THROW(paths::file_size(paths::join(dir, "absent")), Error);
  paths::add_execute_permission(file);
  EXPECT_TRUE(paths::is_regular_file(file));
}

}  // namespace
}  // namespace ft
