// Tests of test-time augmentation: with a probe network whose logits are the first row of the image, the
// averaged logits must be exactly the flip and translation means that each mode promises.
#include <gtest/gtest.h>

#include "evaluation/evaluation.h"

namespace ft {
namespace {

// Logits = the first pixel row of channel 0: [N, W].
class RowProbe : public Network {
 public:
  at::Tensor forward(const at::Tensor& x) override { return x.select(1, 0).select(1, 0).contiguous(); }
};

TEST(TestTimeAugmentation, ModesAverageTheRightViews) {
  RowProbe net;
  const auto x = at::arange(2 * 1 * 4 * 5, at::kFloat).reshape({2, 1, 4, 5}).pow(1.5);
  const auto row = x.select(1, 0).select(1, 0);
  EXPECT_TRUE(at::allclose(tta_logits(net, x, Tta::none), row));
  const auto flip = 0.5 * (row + row.flip({1}));
  EXPECT_TRUE(at::allclose(tta_logits(net, x, Tta::flip), flip));

  // One pixel down-right: the first row is image row 1 (reflected), columns reflect(-1), 0, 1, ...
  // One pixel up-left: the first row is image row 1, columns 1, 2, ..., reflect(W).
  const auto row1 = x.select(1, 0).select(1, 1);
  const auto down_right = at::cat({row1.narrow(1, 1, 1), row1.narrow(1, 0, 4)}, 1);
  const auto up_left = at::cat({row1.narrow(1, 1, 4), row1.narrow(1, 3, 1)}, 1);
  auto mirror_mean = [](const at::Tensor& r) { return 0.5 * (r + r.flip({1})); };
  // flip(translate(x)) first row = the translated row reversed, so each pair is a mirror mean.
  const auto expected = 0.5 * flip + 0.25 * mirror_mean(down_right) + 0.25 * mirror_mean(up_left);
  EXPECT_TRUE(at::allclose(tta_logits(net, x, Tta::flip_translate), expected));
}

}  // namespace
}  // namespace ft
