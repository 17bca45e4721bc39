// The project's one whole-file reader: contents byte for byte, and a missing file is an error that
// names the file and the reason instead of an empty string.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "io/text_file.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft {
namespace {

TEST(TextFile, ReadsEveryByte) {
  const std::string path = ft::test::temp_dir() + "/text_file_bytes.txt";
  std::string text = "line one\nline two\n";
  text += std::string(100000, 'x') + std::string(1, '\0') + "end";
  std::ofstream(path, std::ios::binary) << text;
  EXPECT_EQ(read_text_file(path), text);
}

TEST(TextFile, MissingFileNamesFileAndReason) {
  const std::string path = ft::test::temp_dir() + "/no_such_dir/none.yaml";
  try {
    read_text_file(path, "config file");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read config file " + path + ": No such file or directory");
  }
}

TEST(TextFile, DirectoryIsAnError) {
  EXPECT_THROW(read_text_file(ft::test::temp_dir()), Error);
}

}  // namespace
}  // namespace ft
