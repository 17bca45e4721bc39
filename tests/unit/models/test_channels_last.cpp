// Tests of use_channels_last (src/models/channels_last.h): every 4-D parameter of a network is stored
// channels_last afterwards, every other parameter keeps its layout, and all keep their identity and values.
#include <gtest/gtest.h>

#include <vector>

#include "model_test_util.h"
#include "models/channels_last.h"

namespace ft {
namespace {

TEST(ChannelsLast, EveryFourDimensionalParameterAndNoOther) {
  at::manual_seed(3);
  const auto net = test::build(ModelName::resnet9, InputShape{3, 16, 16, 10}, 8);
  std::vector<at::Tensor> before;
  std::vector<const void*> identity;
  for (const auto& p : net->parameters()) {
    before.push_back(p.detach().clone());
    identity.push_back(p.unsafeGetTensorImpl());
  }
  int four_d = 0, other = 0;
  use_channels_last(*net);
  const auto after = net->parameters();
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    const at::Tensor& p = after[i];
    EXPECT_EQ(p.unsafeGetTensorImpl(), identity[i]) << i << ": the parameter was replaced, not re-laid out";
    EXPECT_TRUE(at::equal(p.detach(), before[i])) << i;
    if (p.dim() == 4) {
      ++four_d;
      EXPECT_TRUE(p.is_contiguous(at::MemoryFormat::ChannelsLast)) << i << " " << p.sizes();
      if (p.size(1) > 1 && p.size(2) * p.size(3) > 1)  // where the two layouts differ
        EXPECT_FALSE(p.is_contiguous()) << i << " " << p.sizes() << ": still in the default layout";
    } else {
      ++other;
      EXPECT_TRUE(p.is_contiguous()) << i << " " << p.sizes();
    }
  }
  EXPECT_GT(four_d, 0);  // the conv weights
  EXPECT_GT(other, 0);   // batch norm weights and biases, the classifier
}

}  // namespace
}  // namespace ft
