// Tests of `fusetrain sweep --set`: overrides reach every point after its own settings, `ranks=N` sets
// the ranks of every point, and a --set of a swept key, of output.* or with a bad value is refused.
#include <gtest/gtest.h>

#include "config/loader.h"
#include "config/sweep.h"
#include "runtime/error.h"

namespace ft {
namespace {

const std::string kSweep =
    "model: {name: simple_cnn}\n"
    "data: {path: data/fashion-mnist, batch_size: 32}\n"
    "optimizer: {name: sgd, lr: 0.01}\n"
    "sweep:\n"
    "  grid:\n"
    "    data.batch_size: [16, 64]\n";

std::string error_of(const std::vector<std::string>& sets, const std::string& yaml = kSweep) {
  try {
    parse_sweep(yaml, "sweep.yaml", sets);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SweepSet, OverridesReachEveryPointAfterItsOwnSettings) {
  const auto s = parse_sweep(kSweep, "sweep.yaml", {"optimizer.lr=0.2", "data.path=/elsewhere"});
  ASSERT_EQ(s.points.size(), 2u);
  for (const auto& p : s.points) {
    const Config c = parse_config(s.base_yaml, "base", p.overrides);
    EXPECT_DOUBLE_EQ(c.optimizer.lr, 0.2) << p.name;
    EXPECT_EQ(c.data.path, "/elsewhere") << p.name;
  }
  EXPECT_EQ(s.points[1].overrides,
            (std::vector<std::string>{"data.batch_size=64", "optimizer.lr=0.2", "data.path=/elsewhere"}));
  EXPECT_EQ(s.points[1].name, "p001-batch_size=64");
  EXPECT_EQ(s.keys, std::vector<std::string>{"data.batch_size"});
}

TEST(SweepSet, BaseYamlStaysTheFileWithoutTheOverrides) {
  const auto s = parse_sweep(kSweep, "sweep.yaml", {"optimizer.lr=0.2"});
  EXPECT_DOUBLE_EQ(parse_config(s.base_yaml, "base").optimizer.lr, 0.01);
}

TEST(SweepSet, RanksSetsEveryPointOfASweepThatDoesNotVaryThem) {
  const auto s = parse_sweep(kSweep, "sweep.yaml", {"ranks=2"});
  for (const auto& p : s.points) {
    EXPECT_EQ(p.ranks, 2) << p.name;
    EXPECT_EQ(p.overrides.size(), 1u) << p.name;
  }
  EXPECT_EQ(s.max_ranks(), 2);
}

TEST(SweepSet, ASweptKeyCannotBeSet) {
  const auto e = error_of({"data.batch_size=8"});
  EXPECT_NE(e.find("--set data.batch_size=8"), std::string::npos) << e;
  EXPECT_NE(e.find("is swept by sweep.yaml"), std::string::npos) << e;
  const auto whole = error_of({"data={batch_size: 8}"});
  EXPECT_NE(whole.find("is swept by sweep.yaml"), std::string::npos) << whole;
  const auto ranks = error_of({"ranks=2"}, kSweep + "    ranks: [1, 2]\n");
  EXPECT_NE(ranks.find("key 'ranks' is swept"), std::string::npos) << ranks;
}

TEST(SweepSet, BadOverridesAreRefusedWithTheirText) {
  const auto unknown = error_of({"optimizer.lrr=0.1"});
  EXPECT_NE(unknown.find("--set optimizer.lrr=0.1"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("did you mean 'optimizer.lr'"), std::string::npos) << unknown;
  EXPECT_NE(error_of({"optimizer.lr=-1"}).find("optimizer.lr"), std::string::npos);
  EXPECT_NE(error_of({"output.dir=/tmp"}).find("set by the sweep"), std::string::npos);
  EXPECT_NE(error_of({"ranks=0"}).find("positive whole number"), std::string::npos);
  EXPECT_NE(error_of({"ranks=two"}).find("positive whole number"), std::string::npos);
  EXPECT_NE(error_of({"no_equals"}).find("expected key=value"), std::string::npos);
}

}  // namespace
}  // namespace ft
