// Tests of the colour-jitter, rotation and cuDNN keys: they load, keep their defaults (off, cuDNN on),
// and out-of-range values are errors naming the key.
#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"
#include "runtime/error.h"

namespace ft {
namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_config(yaml, "run.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(AugmentOptions, JitterRotationAndCudnnLoad) {
  const auto defaults = parse_config("data: {path: d}\n", "run.yaml");
  EXPECT_EQ(defaults.data.augment.brightness, 0);
  EXPECT_EQ(defaults.data.augment.rotation_degrees, 0);
  EXPECT_TRUE(defaults.train.cudnn);
  const auto c = parse_config(
      "data:\n  path: d\n  augment: {brightness: 0.2, contrast: 0.3, saturation: 0.4, rotation_degrees: 15}\n"
      "train: {cudnn: false}\n",
      "run.yaml", {"data.augment.contrast=0.5"});
  EXPECT_DOUBLE_EQ(c.data.augment.brightness, 0.2);
  EXPECT_DOUBLE_EQ(c.data.augment.contrast, 0.5);
  EXPECT_DOUBLE_EQ(c.data.augment.saturation, 0.4);
  EXPECT_DOUBLE_EQ(c.data.augment.rotation_degrees, 15);
  EXPECT_FALSE(c.train.cudnn);
  const auto again = parse_config(dump_config(c), "dump.yaml");
  EXPECT_DOUBLE_EQ(again.data.augment.rotation_degrees, 15);
  EXPECT_FALSE(again.train.cudnn);
}

TEST(AugmentOptions, OutOfRangeValuesNameTheKey) {
  EXPECT_NE(error_of("data: {path: d, augment: {rotation_degrees: 200}}\n").find("data.augment.rotation_degrees"),
            std::string::npos);
  EXPECT_NE(error_of("data: {path: d, augment: {brightness: -0.1}}\n").find("data.augment.brightness"),
            std::string::npos);
  EXPECT_NE(error_of("train: {cudnn: maybe}\n").find("train.cudnn"), std::string::npos);
}

}  // namespace
}  // namespace ft
