// The results file read the way its users read it, column by column under its documented name with plain
// HDF5 calls (not through the field tables that wrote it), against the record's values set by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/h5.h"
#include "io/paths.h"
#include "results/results_file.h"
#include "test_paths.h"

namespace ft {
namespace {

// Every numeric field gets values no other field of its group has, so two columns swapped under their
// names cannot read back as themselves.
RunRecord distinct_record() {
  RunRecord r;
  r.name = "columns";
  r.model = "simple_cnn";
  r.dataset = "quadrants";
  r.precision = "fp32";
  r.batch_size = 16;
  for (int e = 1; e <= 3; ++e) {
    EpochRecord row;
    row.epoch = e;
    row.train_loss = 2.0 + 0.125 * e;
    row.train_acc = 0.5 + 0.0625 * e;
    row.test_loss = 3.0 + 0.25 * e;
    row.test_acc = 0.25 + 0.03125 * e;
    row.lr = 0.0078125 * e;
    row.epoch_time_s = 10.0 + e;
    row.images_per_s = 1000.0 * e;
    row.evaluated = e != 2;
    r.epochs.push_back(row);
  }
  for (int k = 0; k < 2; ++k) {
    RankRecord rank;
    rank.hostname = "host" + std::to_string(k);
    rank.device = "device" + std::to_string(k);
    rank.phase_clock = k ? "cuda_events" : "host";
    rank.local_rank = 7 + k;
    for (std::size_t p = 0; p < kRankPhases; ++p) rank.phase_s[p] = 100.0 * (p + 1) + k;
    rank.peak_memory_bytes = 1000000 + k;
    rank.train_images = 2000 + k;
    rank.allreduce_bytes = 3000000 + k;
    rank.allreduce_s = 4.5 + k;
    rank.comm_hidden_fraction = 0.75 - 0.5 * k;
    rank.train_loss = 1.5 + k;
    rank.train_acc = 0.375 + 0.25 * k;
    rank.test_images = 5000 + k;
    rank.test_loss = 6.5 + k;
    rank.test_acc = 0.625 + 0.125 * k;
    r.ranks.push_back(rank);
  }
  for (int e = 1; e <= 2; ++e)
    for (int k = 0; k < 2; ++k)
      r.rank_epochs.push_back(
          {k, e + 10, 1.0 + e + 0.5 * k, 0.125 * e + 0.0625 * k, 5.0 + e + 0.5 * k, 0.25 * e + 0.03125 * k});
  SegmentRecord segment;
  segment.segment = 1;
  segment.world_size = 3;
  segment.node_count = 2;
  segment.backend = "mpi";
  segment.device = "cpu";
  segment.started_at = "2025-01-02T03:04:05Z";
  segment.start_epoch = 4;
  segment.start_step = 5;
  segment.start_sample = 6;
  segment.per_rank_batch = 8;
  segment.accumulation = 9;
  segment.global_batch = 216;
  segment.lr_factor = 0.5;
  segment.wall_time_s = 12.5;
  r.segments.push_back(segment);
  r.utilization.push_back({0.5, 1, 55.0, 20.0});
  auto& s = r.summary;
  s.wall_time_s = 101.5;
  s.train_time_s = 99.25;
  s.best_test_acc = 0.875;
  s.final_test_acc = 0.8125;
  s.final_test_loss = 0.4375;
  s.best_epoch = 2;
  s.epochs_run = 3;
  s.images_per_s = 1234.5;
  s.peak_memory_bytes = 7 << 20;
  s.overfit = true;
  s.overfit_epoch = 1;
  s.stopped_early = false;
  s.optimizer_steps = 300;
  s.skipped_steps = 4;
  s.bucket_mib = 25.0;
  s.first_bucket_mib = 1.5;
  s.last_bucket_mib = 0.75;
  s.buckets_autotuned = true;
  return r;
}

struct Column {
  std::string name;
  std::vector<double> values;
};

std::string written() {
  const std::string dir = paths::join(ft::test::temp_dir(), "results");
  paths::create_directories(dir);
  const std::string path = paths::join(dir, "columns.h5");
  write_results(path, distinct_record());
  return path;
}

void expect_columns(const std::string& group, const std::vector<Column>& columns) {
  const h5::Handle file = h5::open_file(written());
  const h5::Handle g = h5::open_group(file, group);
  for (const auto& c : columns) {
    ASSERT_TRUE(h5::exists(g, c.name)) << group << "/" << c.name << " is missing";
    EXPECT_EQ(h5::read_all<double>(g, c.name), c.values) << group << "/" << c.name << " holds another field's values";
  }
}

TEST(ResultsColumns, EpochColumnsHoldTheirOwnFields) {
  expect_columns("/epochs", {{"epoch", {1, 2, 3}},
                             {"evaluated", {1, 0, 1}},
                             {"train_loss", {2.125, 2.25, 2.375}},
                             {"train_acc", {0.5625, 0.625, 0.6875}},
                             {"test_loss", {3.25, 3.5, 3.75}},
                             {"test_acc", {0.28125, 0.3125, 0.34375}},
                             {"lr", {0.0078125, 0.015625, 0.0234375}},
                             {"epoch_time_s", {11, 12, 13}},
                             {"images_per_s", {1000, 2000, 3000}}});
}

TEST(ResultsColumns, RankColumnsHoldTheirOwnFields) {
  expect_columns("/ranks", {{"local_rank", {7, 8}},
                            {"peak_memory_bytes", {1000000, 1000001}},
                            {"train_images", {2000, 2001}},
                            {"allreduce_bytes", {3000000, 3000001}},
                            {"allreduce_s", {4.5, 5.5}},
                            {"comm_hidden_fraction", {0.75, 0.25}},
                            {"data_s", {100, 101}},
                            {"forward_s", {200, 201}},
                            {"backward_s", {300, 301}},
                            {"comm_wait_s", {400, 401}},
                            {"optimizer_s", {500, 501}},
                            {"eval_s", {600, 601}},
                            {"train_loss", {1.5, 2.5}},
                            {"train_acc", {0.375, 0.625}},
                            {"test_images", {5000, 5001}},
                            {"test_loss", {6.5, 7.5}},
                            {"test_acc", {0.625, 0.75}}});
  const h5::Handle file = h5::open_file(written());
  const h5::Handle g = h5::open_group(file, "/ranks");
  EXPECT_EQ(h5::read_strings(g, "hostname"), (std::vector<std::string>{"host0", "host1"}));
  EXPECT_EQ(h5::read_strings(g, "device"), (std::vector<std::string>{"device0", "device1"}));
  EXPECT_EQ(h5::read_strings(g, "phase_clock"), (std::vector<std::string>{"host", "cuda_events"}));
}

TEST(ResultsColumns, RankEpochColumnsHoldTheirOwnFields) {
  expect_columns("/rank_epochs", {{"rank", {0, 1, 0, 1}},
                                  {"epoch", {11, 11, 12, 12}},
                                  {"train_loss", {2.0, 2.5, 3.0, 3.5}},
                                  {"train_acc", {0.125, 0.1875, 0.25, 0.3125}},
                                  {"test_loss", {6.0, 6.5, 7.0, 7.5}},
                                  {"test_acc", {0.25, 0.28125, 0.5, 0.53125}}});
}

TEST(ResultsColumns, SegmentAndUtilizationColumnsHoldTheirOwnFields) {
  expect_columns("/segments", {{"segment", {1}},
                               {"world_size", {3}},
                               {"node_count", {2}},
                               {"start_epoch", {4}},
                               {"start_step", {5}},
                               {"start_sample", {6}},
                               {"per_rank_batch", {8}},
                               {"accumulation", {9}},
                               {"global_batch", {216}},
                               {"lr_factor", {0.5}},
                               {"wall_time_s", {12.5}}});
  expect_columns("/utilization", {{"time_s", {0.5}}, {"rank", {1}}, {"gpu_percent", {55}}, {"memory_percent", {20}}});
}

TEST(ResultsColumns, SummaryAttributesHoldTheirOwnFields) {
  const h5::Handle file = h5::open_file(written());
  const h5::Handle g = h5::open_group(file, "/summary");
  const std::vector<std::pair<std::string, double>> doubles = {
      {"wall_time_s", 101.5},   {"train_time_s", 99.25}, {"best_test_acc", 0.875}, {"final_test_acc", 0.8125},
      {"final_test_loss", 0.4375}, {"images_per_s", 1234.5}, {"bucket_mib", 25.0},  {"first_bucket_mib", 1.5},
      {"last_bucket_mib", 0.75}};
  for (const auto& [name, value] : doubles) EXPECT_EQ(h5::attr_double(g, name), value) << "/summary@" << name;
  const std::vector<std::pair<std::string, std::int64_t>> ints = {
      {"best_epoch", 2},    {"epochs_run", 3},       {"peak_memory_bytes", 7 << 20}, {"overfit", 1},
      {"overfit_epoch", 1}, {"stopped_early", 0},    {"optimizer_steps", 300},       {"skipped_steps", 4},
      {"buckets_autotuned", 1}};
  for (const auto& [name, value] : ints) EXPECT_EQ(h5::attr_int(g, name), value) << "/summary@" << name;
}

}  // namespace
}  // namespace ft
