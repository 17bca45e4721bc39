// Tests of source_sha256: files are hashed as one stream in sorted path order, so the value equals
// `cat $(sorted paths) | sha256sum`, checked against the FIPS 180-2 "abc" and empty-input vectors.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "data_prep/checksum.h"
#include "prep_test_util.h"

namespace ft::prep {
namespace {

using namespace ft::prep::testing;

TEST(Checksum, FilesAreHashedAsOneStreamInSortedPathOrder) {
  const fs::path dir = scratch_dir();
  write_text(dir / "b.bin", "c");
  write_text(dir / "a.bin", "ab");
  const std::string abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  EXPECT_EQ(sha256_of_files({(dir / "b.bin").string(), (dir / "a.bin").string()}), abc);
  EXPECT_EQ(sha256_of_files({(dir / "a.bin").string(), (dir / "b.bin").string(), (dir / "a.bin").string()}),
            abc);
}

TEST(Checksum, NoFilesIsTheHashOfNothing) {
  EXPECT_EQ(sha256_of_files({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Checksum, SplitFilesGiveTheLongMessageVector) {
  const fs::path dir = scratch_dir();
  // One million 'a's in two files: the FIPS 180-2 long-message vector.
  write_text(dir / "1.txt", std::string(600000, 'a'));
  write_text(dir / "2.txt", std::string(400000, 'a'));
  EXPECT_EQ(sha256_of_files({(dir / "2.txt").string(), (dir / "1.txt").string()}),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Checksum, FilesLargerThanOneReadBlockMatchAOneShotDigest) {
  const fs::path dir = scratch_dir();
  Bytes data((3 << 20) + 5);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + i / 4096);
  write_file(dir / "big.bin", data);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  ASSERT_EQ(EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr), 1);
  std::string want;
  for (unsigned int i = 0; i < length; ++i) {
    char pair[3];
    std::snprintf(pair, sizeof(pair), "%02x", digest[i]);
    want += pair;
  }
  EXPECT_EQ(sha256_of_files({(dir / "big.bin").string()}), want);
}

TEST(Checksum, UnreadableFileIsNamed) {
  const fs::path dir = scratch_dir();
  try {
    sha256_of_files({(dir / "gone.bin").string()});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gone.bin: cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ft::prep
