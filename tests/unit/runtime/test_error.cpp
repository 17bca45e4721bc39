// The located tier of errors: an internal check's message ends with where it failed, the path cut to what
// follows the first "src/" (the project's own sources) and kept whole otherwise; the user tier carries none.
#include <gtest/gtest.h>

#include <string>

#include "runtime/error.h"

namespace ft {
namespace {

std::string thrown_by(const char* file, int line) {
  try {
    throw_error(file, line, "checked value is 3");
  } catch (const Error& e) {
    return e.what();
  }
  return "nothing thrown";
}

TEST(LocatedError, APathUnderSrcIsCutAfterIt) {
  EXPECT_EQ(thrown_by("/home/me/fusetrain/src/runtime/world.cpp", 42), "checked value is 3 [runtime/world.cpp:42]");
  EXPECT_EQ(thrown_by("src/comm/mpi_backend.cpp", 7), "checked value is 3 [comm/mpi_backend.cpp:7]");
  EXPECT_EQ(thrown_by("src/x.cpp", 0), "checked value is 3 [x.cpp:0]");
}

TEST(LocatedError, OnlyTheFirstSrcIsCut) {
  EXPECT_EQ(thrown_by("/work/src/fusetrain/src/io/hdf5.cpp", 1), "checked value is 3 [fusetrain/src/io/hdf5.cpp:1]");
}

TEST(LocatedError, APathOutsideSrcIsKeptWhole) {
  EXPECT_EQ(thrown_by("/work/fusetrain/tests/a.cpp", 9), "checked value is 3 [/work/fusetrain/tests/a.cpp:9]");
  EXPECT_EQ(thrown_by("kernels/augment.cpp", 12), "checked value is 3 [kernels/augment.cpp:12]");
}

TEST(LocatedError, TheCheckMacroNamesThisFileAndLine) {
  const int line = __LINE__ + 2;
  try {
    FT_CHECK(1 + 1 == 3, "arithmetic ", "broke");
    FAIL() << "FT_CHECK passed a false condition";
  } catch (const Error& e) {
    const std::string msg = e.what();
    const std::string end = "test_error.cpp:" + std::to_string(line) + "]";
    EXPECT_EQ(msg.rfind("arithmetic broke [", 0), 0u) << msg;
    ASSERT_GE(msg.size(), end.size()) << msg;
    EXPECT_EQ(msg.substr(msg.size() - end.size()), end) << msg;
  }
  EXPECT_NO_THROW(FT_CHECK(1 + 1 == 2, "never built"));
}

TEST(UserError, TheRequireMacroCarriesTheMessageAlone) {
  try {
    FT_REQUIRE(false, "config ", "run.yaml", ": key 'train.epochs' is -1");
    FAIL() << "FT_REQUIRE passed a false condition";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "config run.yaml: key 'train.epochs' is -1");
  }
  EXPECT_NO_THROW(FT_REQUIRE(true, "never built"));
}

}  // namespace
}  // namespace ft
