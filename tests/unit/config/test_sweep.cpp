// Tests of sweep expansion: grid order, zip groups, labels, point names, the base config without its
// sweep block, error messages (file:line:column and key), and every shipped config with a sweep: block.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config_error.h"
#include "config/loader.h"
#include "config/sweep.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft {
namespace {

const std::string kBase =
    "# base settings\n"
    "model: {name: simple_cnn}\n"
    "data: {path: data/fashion-mnist, batch_size: 32}\n";

std::string error_of(const std::string& yaml) {
  try {
    parse_sweep(yaml, "sweep.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> names(const Sweep& s) {
  std::vector<std::string> out;
  for (const auto& p : s.points) out.push_back(p.name);
  return out;
}

TEST(Sweep, GridCrossesKeysWithTheLastVaryingFastest) {
  const auto s = parse_sweep(kBase +
                                 "sweep:\n"
                                 "  grid:\n"
                                 "    data.batch_size: [16, 64]\n"
                                 "    ranks: [1, 2]\n",
                             "sweep.yaml");
  EXPECT_EQ(names(s), (std::vector<std::string>{"p000-batch_size=16-ranks=1", "p001-batch_size=16-ranks=2",
                                                 "p002-batch_size=64-ranks=1", "p003-batch_size=64-ranks=2"}));
  EXPECT_EQ(s.points[3].overrides, std::vector<std::string>{"data.batch_size=64"});
  EXPECT_EQ(s.points[2].ranks, 1);
  EXPECT_EQ(s.points[3].ranks, 2);
  EXPECT_EQ(s.points[3].index, 3u);
  EXPECT_EQ(s.max_ranks(), 2);
  EXPECT_EQ(s.keys, std::vector<std::string>{"data.batch_size"});
}

TEST(Sweep, ZipVariesItsKeysTogetherAndCrossesWithTheGrid) {
  const auto s = parse_sweep(kBase +
                                 "sweep:\n"
                                 "  grid: {ranks: [1, 2]}\n"
                                 "  zip:\n"
                                 "    optimizer.name: [sgd, adam]\n"
                                 "    optimizer.lr: [0.05, 0.001]\n",
                             "sweep.yaml");
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_EQ(s.points[1].name, "p001-ranks=1-name=adam-lr=0.001");
  EXPECT_EQ(s.points[1].overrides, (std::vector<std::string>{"optimizer.name=adam", "optimizer.lr=0.001"}));
  EXPECT_EQ(s.points[2].ranks, 2);
  const Config c = parse_config(s.base_yaml, "base", s.points[1].overrides);
  EXPECT_EQ(c.optimizer.name, OptimizerName::adam);
  EXPECT_DOUBLE_EQ(c.optimizer.lr, 0.001);
}

TEST(Sweep, ZipCanHoldSeveralGroupsAndLabelsNameTheirSettings) {
  const auto s = parse_sweep(kBase +
                                 "sweep:\n"
                                 "  zip:\n"
                                 "    - {label: [plain, smooth], regularization.label_smoothing: [0, 0.1]}\n"
                                 "    - {train.accumulation_steps: [1, 2], data.batch_size: [64, 32]}\n",
                             "sweep.yaml");
  EXPECT_EQ(names(s), (std::vector<std::string>{"p000-plain-accumulation_steps=1-batch_size=64",
                                                 "p001-plain-accumulation_steps=2-batch_size=32",
                                                 "p002-smooth-accumulation_steps=1-batch_size=64",
                                                 "p003-smooth-accumulation_steps=2-batch_size=32"}));
  EXPECT_EQ(s.keys, (std::vector<std::string>{"regularization.label_smoothing", "train.accumulation_steps",
                                               "data.batch_size"}));
}

TEST(Sweep, SingleValuesApplyToEveryPointButStayOutOfNames) {
  const auto s = parse_sweep(kBase +
                                 "sweep:\n"
                                 "  grid: {distributed.backend: [mpi, gloo], ranks: 2, train.epochs: [1]}\n",
                             "sweep.yaml");
  EXPECT_EQ(names(s), (std::vector<std::string>{"p000-backend=mpi", "p001-backend=gloo"}));
  EXPECT_EQ(s.points[0].ranks, 2);
  EXPECT_EQ(s.points[1].overrides, (std::vector<std::string>{"distributed.backend=gloo", "train.epochs=1"}));
  EXPECT_EQ(s.keys, std::vector<std::string>{"distributed.backend"});
  // A zip group of one setting keeps its label out of the names too.
  const auto one = parse_sweep(kBase +
                                   "sweep:\n"
                                   "  grid: {distributed.backend: [mpi, gloo]}\n"
                                   "  zip:\n"
                                   "    - {label: [solo], optimizer.lr: [0.1]}\n",
                               "sweep.yaml");
  EXPECT_EQ(names(one), (std::vector<std::string>{"p000-backend=mpi", "p001-backend=gloo"}));
  EXPECT_EQ(one.points[1].overrides, (std::vector<std::string>{"distributed.backend=gloo", "optimizer.lr=0.1"}));
}

TEST(Sweep, KeysSharingAShortNameAreNamedInFull) {
  const auto s = parse_sweep(kBase +
                                 "sweep:\n"
                                 "  grid: {model.name: [simple_cnn, resnet9], optimizer.name: [sgd, adam]}\n",
                             "sweep.yaml");
  EXPECT_EQ(s.points[3].name, "p003-model.name=resnet9-optimizer.name=adam");
}

TEST(Sweep, NonScalarValuesAreNamedByPosition) {
  const auto s = parse_sweep(kBase +
                                 "sweep:\n"
                                 "  grid:\n"
                                 "    data.augment: [{flip: false}, {flip: true, crop_padding: 4}]\n",
                             "sweep.yaml");
  EXPECT_EQ(names(s), (std::vector<std::string>{"p000-augment=v0", "p001-augment=v1"}));
  const Config c = parse_config(s.base_yaml, "base", s.points[1].overrides);
  EXPECT_TRUE(c.data.augment.flip);
  EXPECT_EQ(c.data.augment.crop_padding, 4);
}

TEST(Sweep, BaseYamlDropsTheSweepBlockAndKeepsComments) {
  const std::string yaml = "# header comment\n"
                           "sweep:\n"
                           "  grid:\n"
                           "    data.batch_size: [16, 64]\n"
                           "model: {name: resnet9}  # trailing comment\n"
                           "data: {path: d}\n";
  const auto s = parse_sweep(yaml, "sweep.yaml");
  EXPECT_EQ(s.base_yaml, "# header comment\nmodel: {name: resnet9}  # trailing comment\ndata: {path: d}\n");
  EXPECT_EQ(parse_config(s.base_yaml, "base").model.name, ModelName::resnet9);
}

TEST(Sweep, FlowStyleDocumentsAreReEmittedWithoutTheSweepKey) {
  const auto s = parse_sweep("{model: {name: resnet9}, sweep: {grid: {train.epochs: [1, 2]}}, data: {path: d}}",
                             "sweep.yaml");
  EXPECT_EQ(s.base_yaml.find("sweep"), std::string::npos);
  EXPECT_EQ(parse_config(s.base_yaml, "base").model.name, ModelName::resnet9);
  EXPECT_EQ(s.points.size(), 2u);
}

TEST(SweepErrors, UnknownKeyNamesFileLineAndNearestKey) {
  const auto e = error_of(kBase +
                          "sweep:\n"
                          "  grid:\n"
                          "    data.batchsize: [16, 64]\n");
  EXPECT_NE(e.find("sweep.yaml:6:5:"), std::string::npos) << e;
  EXPECT_NE(e.find("data.batchsize"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'data.batch_size'"), std::string::npos) << e;
}

TEST(SweepErrors, BadValueNamesItsPositionAndTheRule) {
  const auto e = error_of(kBase +
                          "sweep:\n"
                          "  grid:\n"
                          "    data.batch_size: [16, 0]\n");
  EXPECT_NE(e.find("sweep.yaml:6:27:"), std::string::npos) << e;
  EXPECT_NE(e.find("data.batch_size"), std::string::npos) << e;
  EXPECT_NE(e.find("must be >= 1"), std::string::npos) << e;
  EXPECT_EQ(e.find("--set"), std::string::npos) << e;
}

// The sweep moves a value's error to the value's place in its file through ConfigError's fields.
TEST(SweepErrors, ValueErrorsKeepTheirKeyAndMessageAtTheValuesPlace) {
  try {
    parse_sweep(kBase + "sweep:\n  grid:\n    model.layers: [[{type: conv, out: x}]]\n", "sweep.yaml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "sweep.yaml");
    EXPECT_EQ(e.line(), 6);
    EXPECT_EQ(e.column(), 20);
    EXPECT_EQ(e.key(), "model.layers[0]");
    EXPECT_EQ(e.message(), "expected an int value, got 'x'");
    EXPECT_EQ(std::string(e.what()), "sweep.yaml:6:20: key 'model.layers[0]' out: expected an int value, got 'x'");
  }
}

TEST(SweepErrors, BadChoiceNamesTheAllowedValues) {
  const auto e = error_of(kBase + "sweep: {grid: {optimizer.name: [sgd, lamb]}}\n");
  EXPECT_NE(e.find("sweep.yaml:4:38:"), std::string::npos) << e;
  EXPECT_NE(e.find("'lamb' is not one of sgd|adam|adamw|rmsprop"), std::string::npos) << e;
}

TEST(SweepErrors, ZipListsOfDifferentLengths) {
  const auto e = error_of(kBase +
                          "sweep:\n"
                          "  zip:\n"
                          "    optimizer.name: [sgd, adam]\n"
                          "    optimizer.lr: [0.05]\n");
  EXPECT_NE(e.find("sweep.yaml:7:5:"), std::string::npos) << e;
  EXPECT_NE(e.find("same length"), std::string::npos) << e;
}

TEST(SweepErrors, RanksMustBePositiveWholeNumbers) {
  EXPECT_NE(error_of(kBase + "sweep: {grid: {ranks: [1, 0]}}\n").find("sweep.yaml:4:27: sweep.grid key 'ranks'"),
            std::string::npos);
  EXPECT_NE(error_of(kBase + "sweep: {grid: {ranks: [1.5]}}\n").find("'1.5'"), std::string::npos);
}

TEST(SweepErrors, OutputKeysBelongToTheSweep) {
  EXPECT_NE(error_of(kBase + "sweep: {grid: {output.name: [a, b]}}\n").find("cannot be swept"), std::string::npos);
}

TEST(SweepErrors, StructuralMistakes) {
  EXPECT_NE(error_of(kBase).find("no top-level sweep: block"), std::string::npos);
  EXPECT_NE(error_of(kBase + "sweep: {grids: {ranks: [1]}}\n").find("unknown key 'sweep.grids'"), std::string::npos);
  EXPECT_NE(error_of(kBase + "sweep: {grid: {data.batch_size: []}}\n").find("empty list"), std::string::npos);
  EXPECT_NE(error_of(kBase + "sweep: {grid: {ranks: [1]}, zip: {ranks: [2]}}\n").find("swept twice"),
            std::string::npos);
  EXPECT_NE(error_of(kBase + "sweep: {}\n").find("lists no keys"), std::string::npos);
  EXPECT_NE(error_of(kBase + "sweep: {zip: {label: [a, b], train.epochs: [1]}}\n").find("2 names for 1"),
            std::string::npos);
}

TEST(SweepErrors, TheBaseConfigIsCheckedToo) {
  const auto e = error_of("model: {name: simple_cnn, dropuot: 0.1}\nsweep: {grid: {ranks: [1, 2]}}\n");
  EXPECT_NE(e.find("sweep.yaml:1:27"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'model.dropout'"), std::string::npos) << e;
}

TEST(ShippedSweeps, EveryConfigWithASweepBlockExpands) {
  namespace fs = std::filesystem;
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(ft::test::source_dir()) / "configs")) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find("\nsweep:") == std::string::npos) continue;
    try {
      const auto s = load_sweep(entry.path().string());
      EXPECT_GT(s.points.size(), 1u) << entry.path();
      EXPECT_NO_THROW(parse_config(s.base_yaml, entry.path().string())) << entry.path();
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
    ++count;
  }
  EXPECT_GT(count, 0);
}

}  // namespace
}  // namespace ft
