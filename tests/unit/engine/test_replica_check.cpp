// Tests of parameter_checksum (engine/replica_check.cpp): the bytes of the tensors in order through 64-bit
// FNV-1a, against the published test vectors, so one flipped bit anywhere changes the sum.
#include "engine/replica_check.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ft {
namespace {

at::Tensor bytes_of(const std::string& text) {
  auto t = at::empty({static_cast<std::int64_t>(text.size())}, at::kByte);
  std::memcpy(t.data_ptr(), text.data(), text.size());
  return t;
}

// FNV-1a 64 vectors from the reference test suite of Fowler, Noll and Vo.
TEST(ParameterChecksum, MatchesTheFnv1aTestVectors) {
  EXPECT_EQ(parameter_checksum({}), 0xcbf29ce484222325ull) << "no bytes: the offset basis";
  EXPECT_EQ(parameter_checksum({bytes_of("a")}), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(parameter_checksum({bytes_of("foobar")}), 0x85944171f73967e8ull);
  EXPECT_EQ(parameter_checksum({bytes_of("foo"), bytes_of("bar")}), 0x85944171f73967e8ull)
      << "the tensors' bytes run on as one stream";
}

TEST(ParameterChecksum, ReadsEachTensorsBytesInLogicalOrder) {
  const auto matrix = at::arange(6, at::kFloat).reshape({2, 3});
  const auto flat = at::arange(6, at::kFloat);
  EXPECT_EQ(parameter_checksum({matrix.t().contiguous().t()}), parameter_checksum({flat}))
      << "a strided view is summed as its values in order";
  auto flipped = flat.clone();
  flipped.view(at::kInt).data_ptr<std::int32_t>()[5] ^= 1;
  EXPECT_NE(parameter_checksum({flipped}), parameter_checksum({flat}));
}

}  // namespace
}  // namespace ft
