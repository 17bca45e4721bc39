// Tests of the expansion of file and folder arguments: recursion in sorted path order, the extension rule
// inside folders with what it leaves out reported, files named directly taken as they are, errors named.
#include <gtest/gtest.h>

#include "data_prep/image_inputs.h"
#include "prep_test_util.h"

namespace ft::prep {
namespace {

using namespace testing;

TEST(ImageInputs, FoldersRecurseSortedAndReportWhatTheyLeaveOut) {
  const auto dir = scratch_dir();
  for (const char* name : {"b/2.png", "b/10.PNG", "a/z.jpeg", "a/sub/y.jpg", "c.JPG", "notes.txt", ".hidden.png"})
    write_text(dir / name, "x");
  write_text(dir / "photo.bin", "x");
  const std::string root = dir.string();
  const auto inputs = list_image_inputs({(dir / "photo.bin").string(), root});
  const std::vector<std::string> files = {root + "/photo.bin", root + "/a/sub/y.jpg", root + "/a/z.jpeg",
                                          root + "/b/10.PNG", root + "/b/2.png", root + "/c.JPG"};
  EXPECT_EQ(inputs.files, files);
  const std::vector<std::string> skipped = {root + "/.hidden.png", root + "/notes.txt", root + "/photo.bin"};
  EXPECT_EQ(inputs.skipped, skipped);
}

TEST(ImageInputs, MissingPathsAndImagelessFoldersAreErrors) {
  const auto dir = scratch_dir();
  write_text(dir / "empty/readme.txt", "x");
  const auto error_of = [](const std::vector<std::string>& args) {
    try {
      list_image_inputs(args);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of({(dir / "absent").string()}).find("absent: no such file or folder"), std::string::npos);
  EXPECT_NE(error_of({(dir / "empty").string()}).find("empty: folder holds no .jpg"), std::string::npos);
  EXPECT_NE(error_of({}).find("no image files"), std::string::npos);
}

}  // namespace
}  // namespace ft::prep
