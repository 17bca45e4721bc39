// Tests of how config numbers are printed: the shortest text that reads back to the same double, in
// the config dump (train --dry-run, the results file's /config) and in the resume fingerprint.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <regex>

#include "config/loader.h"
#include "config/number_text.h"

namespace ft {
namespace {

TEST(NumberText, ShortestFormReadsBackExactly) {
  EXPECT_EQ(shortest_number(0.9), "0.9");
  EXPECT_EQ(shortest_number(0.05), "0.05");
  EXPECT_EQ(shortest_number(1e-5), "1e-05");
  EXPECT_EQ(shortest_number(60), "60");  // not 6e+01
  EXPECT_EQ(shortest_number(-3), "-3");
  EXPECT_EQ(shortest_number(1e20), "1e+20");
  EXPECT_EQ(shortest_number(0.1 + 0.2), "0.30000000000000004");  // 0.3 would read back as another double
  for (double v : {0.9, 1.0 / 3, 0.1 + 0.2, 1e-5, 60.0, 1e20, -0.0, 6.02214076e23, -2.5,
                   std::numeric_limits<double>::min(), std::numeric_limits<double>::denorm_min(),
                   std::numeric_limits<double>::max()}) {
    const std::string text = shortest_number(v);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
  }
}

TEST(NumberText, RewritesOnlyFloatLiterals) {
  EXPECT_EQ(shortest_number_text("0.90000000000000002"), "0.9");
  EXPECT_EQ(shortest_number_text("1.0000000000000001e-05"), "1e-05");
  EXPECT_EQ(shortest_number_text("32"), "32");
  EXPECT_EQ(shortest_number_text("60.0"), "60");
  EXPECT_EQ(shortest_number_text("simple_cnn"), "simple_cnn");
  EXPECT_EQ(shortest_number_text("0.5x"), "0.5x");
  EXPECT_EQ(shortest_number_text("[1, 2.50]"), "[1, 2.50]");
}

TEST(NumberText, DumpPrintsShortestNumbers) {
  const auto c = parse_config("model: {name: simple_cnn, dropout: 0.1}\n"
                              "optimizer: {name: sgd, lr: 0.05, momentum: 0.9, weight_decay: 1.0e-5}\n",
                              "run.yaml");
  const std::string text = dump_config(c);
  EXPECT_NE(text.find("momentum: 0.9\n"), std::string::npos) << text;
  EXPECT_NE(text.find("lr: 0.05\n"), std::string::npos) << text;
  EXPECT_NE(text.find("dropout: 0.1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("weight_decay: 1e-05\n"), std::string::npos) << text;
  EXPECT_NE(text.find("stall_timeout_s: 60\n"), std::string::npos) << text;
  // No value anywhere in the dump (defaults included) is printed with round-off digits.
  std::smatch long_number;
  EXPECT_FALSE(std::regex_search(text, long_number, std::regex("[0-9]\\.[0-9]{12,}")))
      << long_number.str() << " in\n" << text;
}

TEST(NumberText, DumpedValuesReadBackEqual) {
  const auto c = parse_config(
      "model: {name: conv_stack, layers: [flatten, {type: dropout, p: 0.3333333333333333}, {type: linear}]}\n"
      "optimizer: {name: sgd, lr: 0.30000000000000004, momentum: 0.9, weight_decay: 1.0e-5, eps: 1.0e-300}\n"
      "regularization: {label_smoothing: 0.1}\nscheduler: {pct_start: 0.7}\n",
      "run.yaml");
  const auto again = parse_config(dump_config(c), "dump.yaml");
  EXPECT_EQ(again.optimizer.lr, 0.1 + 0.2);
  EXPECT_EQ(again.optimizer.momentum, 0.9);
  EXPECT_EQ(again.optimizer.weight_decay, 1e-5);
  EXPECT_EQ(again.optimizer.eps, 1e-300);
  EXPECT_EQ(again.regularization.label_smoothing, 0.1);
  EXPECT_EQ(again.scheduler.pct_start, 0.7);
  ASSERT_EQ(again.model.layers.size(), 3u);
  EXPECT_EQ(again.model.layers[1].p, 1.0 / 3);
  EXPECT_EQ(dump_config(again), dump_config(c));
}

}  // namespace
}  // namespace ft
