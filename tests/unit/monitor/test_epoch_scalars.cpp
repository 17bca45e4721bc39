// The TensorBoard memory scalars: a rank's peak reserved and allocated bytes as MiB, under the tags a run's live
// event file and `fusetrain report --tensorboard` share, against the division worked out here.
#include <gtest/gtest.h>

#include "monitor/epoch_scalars.h"

namespace ft {
namespace {

TEST(MemoryScalars, BytesAsMiBUnderTheirTags) {
  const double mib = 1024.0 * 1024.0;
  const std::vector<Scalar> got = memory_scalars(3 * mib + mib / 2, 5 * mib);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].tag, "memory/peak_mib");
  EXPECT_DOUBLE_EQ(got[0].value, 3.5);
  EXPECT_EQ(got[1].tag, "memory/peak_allocated_mib");
  EXPECT_DOUBLE_EQ(got[1].value, 5.0);
  const std::vector<Scalar> none = memory_scalars(0, 0);
  EXPECT_EQ(none[0].value, 0.0);
  EXPECT_EQ(none[1].value, 0.0);
  EXPECT_DOUBLE_EQ(memory_scalars(1, 0)[0].value, 1.0 / mib);  // one byte: a millionth of a MiB, not zero
}

}  // namespace
}  // namespace ft
