// set_normalization against its contract: each channel takes (x - mean) / std from the first `channels` values
// given (more are ignored, fewer or a zero std are errors naming the source), and !normalize is the identity.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/dataset.h"
#include "runtime/error.h"

namespace ft::normalization_test {
namespace {

AugmentParams params_of(int channels) {
  AugmentParams p;
  p.height = p.width = 4;
  p.channels = channels;
  return p;
}

TEST(Normalization, EachChannelTakesItsMeanAndTheInverseOfItsStd) {
  AugmentParams p = params_of(3);
  set_normalization(p, {0.25, 0.5, 0.75}, {0.5, 0.25, 0.125}, true, "data set test");
  const std::vector<float> want_mean = {0.25f, 0.5f, 0.75f}, want_inv = {2.0f, 4.0f, 8.0f};
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(p.mean[c], want_mean[c]) << "channel " << c;
    EXPECT_EQ(p.inv_std[c], want_inv[c]) << "channel " << c;
  }
}

TEST(Normalization, ValuesBeyondTheImagesChannelsAreIgnored) {
  // A one-channel image described by three channels' statistics: the first channel's are used.
  AugmentParams p = params_of(1);
  set_normalization(p, {0.2, 0.4, 0.6}, {0.5, 0.1, 0.1}, true, "data set test");
  EXPECT_EQ(p.mean[0], 0.2f);
  EXPECT_EQ(p.inv_std[0], 2.0f);
}

TEST(Normalization, WithoutNormalizeEveryChannelIsLeftAsItIs) {
  AugmentParams p = params_of(3);
  set_normalization(p, {0.25, 0.5, 0.75}, {0.5, 0.0, 0.125}, false, "data set test");
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(p.mean[c], 0.0f) << "channel " << c;
    EXPECT_EQ(p.inv_std[c], 1.0f) << "channel " << c;
  }
}

TEST(Normalization, MissingOrZeroStdsAreErrorsNamingTheSource) {
  AugmentParams p = params_of(3);
  try {
    set_normalization(p, {0.1, 0.2}, {0.5, 0.5}, true, "data set short");
    FAIL() << "two channels' statistics accepted for three channels";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("data set short has 2 means and 2 stds for 3 channels"), std::string::npos)
        << e.what();
  }
  try {
    set_normalization(p, {0.1, 0.2, 0.3}, {0.5, 0.0, 0.5}, true, "data set flat");
    FAIL() << "a zero std accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("data set flat has std 0 in channel 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ft::normalization_test
