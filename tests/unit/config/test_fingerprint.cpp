// Tests of the resume fingerprint's comparison: changed keys are named, and a checkpoint written before
// a key existed still resumes when that key is at its default (it computed as the default does).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "config/fingerprint.h"

namespace ft {
namespace {

// The fingerprint of `config` as an older version wrote it: without distributed.reproducible and
// distributed.micro_batches.
std::string fingerprint_without_newer_keys(const Config& config) {
  YAML::Node node = YAML::Load(run_fingerprint(config));
  node["distributed"].remove("reproducible");
  node["distributed"].remove("micro_batches");
  YAML::Emitter text;
  text << node;
  return text.c_str();
}

TEST(Fingerprint, NeutralKeysDoNotDiffer) {
  Config a, b;
  b.train.epochs = a.train.epochs + 5;
  b.train.threads = 3;
  b.output.dir = "/elsewhere";
  EXPECT_TRUE(fingerprint_differences(run_fingerprint(a), run_fingerprint(b)).empty());
}

TEST(Fingerprint, ChangedKeyIsNamedWithBothValues) {
  Config a, b;
  b.optimizer.lr = 0.02;
  const auto d = fingerprint_differences(run_fingerprint(a), run_fingerprint(b));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "optimizer.lr: 0.01 in the checkpoint, 0.02 now");
}

TEST(Fingerprint, KeyNewerThanTheCheckpointMatchesAtItsDefault) {
  const Config config;
  EXPECT_TRUE(
      fingerprint_differences(fingerprint_without_newer_keys(config), run_fingerprint(config)).empty());
}

TEST(Fingerprint, KeyNewerThanTheCheckpointAwayFromItsDefaultDiffers) {
  Config now;
  now.distributed.reproducible = true;
  const auto d = fingerprint_differences(fingerprint_without_newer_keys(Config{}), run_fingerprint(now));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "distributed.reproducible: (absent) in the checkpoint, true now");
}

TEST(Fingerprint, KeyTheCheckpointHasAndThisRunLacksDiffers) {
  const Config config;
  const auto d = fingerprint_differences(run_fingerprint(config), fingerprint_without_newer_keys(config));
  EXPECT_EQ(d.size(), 2u);
}

}  // namespace
}  // namespace ft
