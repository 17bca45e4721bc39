// Tests of the CPU reference of the fused conv+bias+ReLU kernel against hand-computed outputs,
// and of the geometry checks that both the reference and the CUDA launcher apply.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/conv_relu.h"
#include "runtime/error.h"

namespace ft {
namespace {

ConvGeometry geometry(int n, int c, int h, int w, int out, int k, int stride, int pad) {
  ConvGeometry g;
  g.batch = n;
  g.in_channels = c;
  g.height = h;
  g.width = w;
  g.out_channels = out;
  g.kernel_h = g.kernel_w = k;
  g.stride_h = g.stride_w = stride;
  g.pad_h = g.pad_w = pad;
  return g;
}

TEST(ConvReluKernel, OutputSizeFloorsLikeConv2d) {
  EXPECT_EQ(conv_out_height(geometry(1, 1, 32, 32, 1, 3, 1, 1)), 32);
  EXPECT_EQ(conv_out_height(geometry(1, 1, 9, 9, 1, 5, 2, 2)), 5);
  EXPECT_EQ(conv_out_width(geometry(1, 1, 8, 7, 1, 3, 2, 0)), 3);
}

TEST(ConvReluKernel, HandComputedTwoChannelExample) {
  // x: one 3x3 image 1..9; two 2x2 filters, stride 1, no padding -> 2x2 outputs.
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<double> w = {1, 0, 0, 1,     // main diagonal: x[i][j] + x[i+1][j+1]
                                 0, -1, -1, 0};  // minus the anti-diagonal
  const std::vector<double> b = {-7, 9};
  std::vector<double> y(8, -1);
  conv_bias_relu_cpu(x.data(), w.data(), b.data(), y.data(), geometry(1, 1, 3, 3, 2, 2, 1, 0));
  // channel 0: 1+5-7, 2+6-7, 4+8-7, 5+9-7 = -1 -> 0, 1, 5, 7; channel 1: 9-(2+4), 9-(3+5), 9-(5+7), 9-(6+8).
  EXPECT_EQ(y, (std::vector<double>{0, 1, 5, 7, 3, 1, 0, 0}));
}

TEST(ConvReluKernel, PaddingStrideAndMissingBias) {
  // A 3x3 all-ones filter over a 4x4 image of ones, padding 1, stride 2: counts of in-image taps.
  const std::vector<float> x(16, 1.f), w(9, 1.f);
  std::vector<float> y(4, -1.f);
  conv_bias_relu_cpu<float>(x.data(), w.data(), nullptr, y.data(), geometry(1, 1, 4, 4, 1, 3, 2, 1));
  EXPECT_EQ(y, (std::vector<float>{4, 6, 6, 9}));
}

TEST(ConvReluKernel, SumsOverInputChannelsAndKeepsBatchesApart) {
  // Two images of two channels, a 1x1 filter weighting the channels 1 and 10.
  const std::vector<double> x = {1, 2, 3, 4,  // image 0, channel 0 (2x2)
                                 5, 6, 7, 8,  // image 0, channel 1
                                 -1, -2, -3, -4, 0, 0, 1, 0};
  const std::vector<double> w = {1, 10};
  std::vector<double> y(8, -1);
  conv_bias_relu_cpu(x.data(), w.data(), static_cast<const double*>(nullptr), y.data(),
                     geometry(2, 2, 2, 2, 1, 1, 1, 0));
  EXPECT_EQ(y, (std::vector<double>{51, 62, 73, 84, 0, 0, 7, 0}));
}

TEST(ConvReluKernel, RejectsImpossibleGeometry) {
  EXPECT_THROW(check_conv_geometry(geometry(0, 1, 8, 8, 1, 3, 1, 1)), Error);
  EXPECT_THROW(check_conv_geometry(geometry(1, 1, 8, 8, 1, 3, 0, 1)), Error);
  EXPECT_THROW(check_conv_geometry(geometry(1, 1, 8, 8, 1, 3, 1, -1)), Error);
  EXPECT_THROW(check_conv_geometry(geometry(1, 1, 2, 2, 1, 5, 1, 1)), Error);  // kernel larger than padded input
  EXPECT_NO_THROW(check_conv_geometry(geometry(1, 1, 2, 2, 1, 4, 1, 1)));
}

// Each side on its own, the other roomy: an input padded on both sides (length + 2 x pad) exactly the kernel's
// size fits once, one element less does not, for paddings 0, 1 and 2.
TEST(ConvReluKernel, EachSideFitsTheKernelOnlyWithBothPaddings) {
  for (int pad = 0; pad <= 2; ++pad) {
    const int kernel = 7, exact = kernel - 2 * pad;
    for (const bool tall : {true, false}) {
      ConvGeometry g = geometry(1, 1, 16, 16, 1, kernel, 1, pad);
      (tall ? g.height : g.width) = exact;
      EXPECT_NO_THROW(check_conv_geometry(g)) << "pad " << pad << (tall ? " height " : " width ") << exact;
      EXPECT_EQ(tall ? conv_out_height(g) : conv_out_width(g), 1);
      (tall ? g.height : g.width) = exact - 1;
      EXPECT_THROW(check_conv_geometry(g), Error) << "pad " << pad << (tall ? " height " : " width ") << exact - 1;
    }
  }
}

}  // namespace
}  // namespace ft
