// The output rule every command shares: existing files kept unless replacing was allowed, inputs never
// outputs (whatever the spelling), folders refused, and numbered fresh names beside a taken one.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "io/output_claim.h"
#include "io/paths.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft {
namespace {

std::string scratch() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = paths::join(ft::test::temp_dir(), cat("output_claim/", info->name()));
  paths::remove_all(dir);
  paths::create_directories(dir);
  return dir;
}

void touch(const std::string& path, const std::string& text = "x") { std::ofstream(path) << text; }

std::string error_of(const OutputClaim& claim) {
  try {
    claim_output(claim);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(OutputClaim, ExistingFileIsKeptUnlessReplacingWasAllowed) {
  const std::string dir = scratch(), file = paths::join(dir, "run.h5");
  touch(file, "results");
  EXPECT_EQ(error_of({file, "--out", "--force", false, {}}),
            cat("--out ", file, " exists and is kept: choose another path or use --force to replace it"));
  EXPECT_EQ(error_of({file, "--out", "--force", true, {}}), "");
  std::ifstream in(file);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "results");  // claiming writes nothing
}

TEST(OutputClaim, AnInputIsNeverAnOutputHoweverSpelled) {
  const std::string dir = scratch(), model = paths::join(dir, "run.model");
  touch(model);
  const std::vector<std::pair<std::string, std::string>> inputs = {{"--checkpoint", model}};
  for (const std::string& spelling : {model, paths::join(dir, "./run.model"), paths::join(dir, "../" +
                                      paths::filename(dir) + "/run.model")}) {
    const std::string e = error_of({spelling, "--out", "--force", true, inputs});
    EXPECT_NE(e.find("is the file this command reads (--checkpoint " + model + ")"), std::string::npos) << e;
  }
  // A not-yet-existing output compares by its absolute path.
  const std::string absent = paths::join(dir, "absent.pt");
  EXPECT_NE(error_of({absent, "--out", "--force", true, {{"--data", absent}}}).find("is the file this command reads"),
            std::string::npos);
}

TEST(OutputClaim, FoldersAndUnwritablePlacesAreRefusedBeforeAnyWork) {
  const std::string dir = scratch();
  EXPECT_NE(error_of({dir, "--out", "--force", true, {}}).find("is a folder: give a file name"), std::string::npos);
  touch(paths::join(dir, "file"));
  const std::string under_file = paths::join(dir, "file/x.h5");
  EXPECT_NE(error_of({under_file, "--out", "--force", false, {}}).find(cat("--out ", under_file, " cannot be written")),
            std::string::npos);
  // A missing folder is created.
  EXPECT_EQ(error_of({paths::join(dir, "new/deeper/x.h5"), "--out", "--force", false, {}}), "");
  EXPECT_TRUE(paths::is_directory(paths::join(dir, "new/deeper")));
}

TEST(OutputClaim, NumberedNamesKeepTheExtension) {
  EXPECT_EQ(numbered_path("runs/a-eval-test.h5", 1), "runs/a-eval-test.h5");
  EXPECT_EQ(numbered_path("runs/a-eval-test.h5", 2), "runs/a-eval-test-2.h5");
  EXPECT_EQ(numbered_path("out", 3), "out-3");
  EXPECT_EQ(numbered_path("/x.y.csv", 12), "/x.y-12.csv");
  const std::set<std::string> taken = {"e.h5", "e-2.h5", "e-4.h5"};
  EXPECT_EQ(first_free_path("e.h5", [&](const std::string& p) { return taken.count(p) > 0; }), "e-3.h5");
  EXPECT_EQ(first_free_path("f.h5", [&](const std::string& p) { return taken.count(p) > 0; }), "f.h5");
}

TEST(OutputClaim, SameFileByInode) {
  const std::string dir = scratch(), a = paths::join(dir, "a"), link = paths::join(dir, "b");
  touch(a);
  ASSERT_EQ(::symlink(a.c_str(), link.c_str()), 0);
  EXPECT_TRUE(same_file(a, link));
  touch(paths::join(dir, "c"));
  EXPECT_FALSE(same_file(a, paths::join(dir, "c")));
}

}  // namespace
}  // namespace ft
