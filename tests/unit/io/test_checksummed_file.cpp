// Tests of CRC-32-trailed files (src/io/checksummed_file.h): an intact file verifies, and a truncation, a
// flipped bit anywhere (payload or trailer), a missing trailer or a missing file are each reported.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "io/checksummed_file.h"
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

std::string payload() {
  std::string text;
  for (int i = 0; i < 300; ++i) text += static_cast<char>(i * 7 + 3);
  return text;
}

void write_raw(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(ChecksummedFile, IntactBytesVerifyAndKeepThePayloadInFront) {
  const std::string bytes = with_checksum(payload());
  EXPECT_EQ(bytes.size(), payload().size() + kChecksumTrailerBytes);
  EXPECT_EQ(bytes.substr(0, payload().size()), payload());
  EXPECT_EQ(checksum_problem(bytes), "");
  EXPECT_EQ(checksum_problem(with_checksum("")), "");
}

TEST(ChecksummedFile, EveryFlippedBitIsDetected) {
  const std::string good = with_checksum(payload());
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      EXPECT_NE(checksum_problem(bad), "") << "byte " << i << " bit " << bit;
    }
  }
}

TEST(ChecksummedFile, TruncationAndAMissingTrailerAreDetected) {
  const std::string good = with_checksum(payload());
  for (std::size_t keep : {std::size_t{0}, std::size_t{5}, payload().size(), good.size() - 1})
    EXPECT_NE(checksum_problem(good.substr(0, keep)).find("no checksum"), std::string::npos) << keep;
  EXPECT_NE(checksum_problem(payload()).find("no checksum"), std::string::npos);
}

TEST(ChecksummedFile, AFlippedPayloadBitIsAMismatchAndAFlippedSizeIsGarbled) {
  std::string bad = with_checksum(payload());
  bad[100] = static_cast<char>(bad[100] ^ 0x10);
  EXPECT_EQ(checksum_problem(bad), "checksum mismatch");
  bad = with_checksum(payload());
  bad[payload().size() + 4] = static_cast<char>(bad[payload().size() + 4] ^ 0x01);  // the size field
  EXPECT_NE(checksum_problem(bad).find("garbled checksum"), std::string::npos) << checksum_problem(bad);
}

TEST(ChecksummedFile, FilesAreJudgedLikeTheirBytes) {
  const fs::path dir = scratch_dir();
  const std::string path = (dir / "run.ckpt").string();
  write_checksummed_file(path, payload());
  EXPECT_EQ(file_checksum_problem(path), "");
  std::ifstream in(path, std::ios::binary);
  std::stringstream read;
  read << in.rdbuf();
  EXPECT_EQ(read.str(), with_checksum(payload()));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "a temporary was left";

  std::string bad = with_checksum(payload());
  bad[150] = static_cast<char>(bad[150] ^ 0x80);
  write_raw(path, bad);
  EXPECT_EQ(file_checksum_problem(path), "checksum mismatch");
  write_raw(path, with_checksum(payload()).substr(0, 200));
  EXPECT_NE(file_checksum_problem(path).find("no checksum"), std::string::npos);
  write_raw(path, "");
  EXPECT_NE(file_checksum_problem(path).find("no checksum"), std::string::npos);
  EXPECT_EQ(file_checksum_problem((dir / "absent.ckpt").string()), "missing");
}

// A file is read in blocks from the disk, not as one string: a flip in its first or last payload byte, or in
// any byte of its trailer, must be found there too (the edges are where a short read or sum would miss it).
TEST(ChecksummedFile, FilesDetectAFlipAtEitherEndOfThePayloadAndInTheTrailer) {
  const std::string path = (scratch_dir() / "edges.ckpt").string();
  const std::string good = with_checksum(payload());
  std::vector<std::size_t> positions = {0, payload().size() - 1};
  for (std::size_t i = payload().size(); i < good.size(); ++i) positions.push_back(i);
  for (std::size_t i : positions) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    write_raw(path, bad);
    EXPECT_NE(file_checksum_problem(path), "") << "a flipped bit in byte " << i << " of " << good.size() << " passed";
  }
  write_raw(path, good);
  EXPECT_EQ(file_checksum_problem(path), "");
}

TEST(ChecksummedFile, AWriteThatCannotLandNamesThePath) {
  const std::string path = (scratch_dir() / "no-such-folder" / "run.ckpt").string();
  try {
    write_checksummed_file(path, payload());
    FAIL() << "wrote into a missing folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ft
