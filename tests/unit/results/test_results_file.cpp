// Round trip of the HDF5 results file, its atomic replacement, and the report table built from it.
#include <gtest/gtest.h>

#include <fstream>

#include "io/h5.h"
#include "io/paths.h"
#include "results/detail_tables.h"
#include "results/report_table.h"
#include "results/results_fields.h"
#include "results/results_file.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft {
namespace {

RunRecord sample(const std::string& name, int batch, double acc) {
  RunRecord r;
  r.name = name;
  r.model = "simple_cnn";
  r.dataset = "cifar10";
  r.precision = "fp32";
  r.batch_size = batch;
  r.config_yaml = "optimizer:\n  name: adam\n  lr: 0.001\ndata:\n  batch_size: " + std::to_string(batch) + "\n";
  r.provenance.world_size = 2;
  r.provenance.backend = "gloo";
  r.provenance.torch_version = "2.11.0";
  for (int e = 1; e <= 3; ++e) r.epochs.push_back({e, 1.0 / e, 0.3 * e, 1.2 / e, acc * e / 3, 0.01, 2.5, 900.0, true});
  r.ranks.resize(2);
  r.ranks[1].hostname = "node7";
  r.ranks[1].local_rank = 3;
  r.ranks[1].phase_s[3] = 1.25;
  r.ranks[1].peak_memory_bytes = 1 << 20;
  r.ranks[1].device = "Test GPU";
  r.ranks[0].device = "Test GPU";
  r.ranks[1].phase_s[1] = 3.0;  // forward: mean over the two ranks 1.50
  r.ranks[1].train_loss = 0.375;
  r.ranks[1].train_acc = 0.875;
  r.ranks[1].test_images = 5000;
  r.ranks[1].test_loss = 0.625;
  r.ranks[1].test_acc = 0.8125;
  for (int e = 1; e <= 3; ++e)
    for (int rank = 0; rank < 2; ++rank)
      r.rank_epochs.push_back({rank, e, 1.0 / e, 0.25 * e, 1.5 / e, 0.2 * e + 0.1 * rank});
  r.utilization.push_back({0.1, 1, 55.0, 20.0});
  r.utilization.push_back({0.2, 0, 65.0, 20.0});
  r.layers = {{"conv1", "32x32x32", 896}, {"max_pool2d", "32x16x16", 0}, {"fc", "10", 81930}};
  r.summary.final_test_acc = acc;
  r.summary.best_test_acc = acc;
  r.summary.overfit = true;
  r.summary.overfit_epoch = 2;
  r.summary.images_per_s = 1234.5;
  r.summary.peak_memory_bytes = 3 << 20;
  return r;
}

std::string scratch(const std::string& name) {
  const std::string dir = paths::join(ft::test::temp_dir(), "results");
  paths::create_directories(dir);
  return paths::join(dir, name);
}

TEST(ResultsFile, RoundTrip) {
  const auto path = scratch("round.h5");
  const auto r = sample("run-a", 32, 0.7);
  write_results(path, r);
  const auto back = read_results(path);
  EXPECT_EQ(back.name, "run-a");
  EXPECT_EQ(back.batch_size, 32);
  EXPECT_EQ(back.config_yaml, r.config_yaml);
  EXPECT_EQ(back.provenance.backend, "gloo");
  ASSERT_EQ(back.epochs.size(), 3u);
  EXPECT_DOUBLE_EQ(back.epochs[2].test_acc, 0.7);
  ASSERT_EQ(back.ranks.size(), 2u);
  EXPECT_EQ(back.ranks[1].hostname, "node7");
  EXPECT_EQ(back.ranks[1].local_rank, 3);
  EXPECT_EQ(back.ranks[0].local_rank, 0);
  EXPECT_DOUBLE_EQ(back.ranks[1].phase_s[3], 1.25);
  EXPECT_DOUBLE_EQ(back.ranks[1].train_loss, 0.375);
  EXPECT_DOUBLE_EQ(back.ranks[1].train_acc, 0.875);
  EXPECT_EQ(back.ranks[1].test_images, 5000);
  EXPECT_DOUBLE_EQ(back.ranks[1].test_loss, 0.625);
  EXPECT_DOUBLE_EQ(back.ranks[1].test_acc, 0.8125);
  ASSERT_EQ(back.rank_epochs.size(), 6u);
  EXPECT_EQ(back.rank_epochs[5].rank, 1);
  EXPECT_EQ(back.rank_epochs[5].epoch, 3);
  EXPECT_DOUBLE_EQ(back.rank_epochs[5].train_acc, 0.75);
  EXPECT_DOUBLE_EQ(back.rank_epochs[5].test_loss, 0.5);
  EXPECT_DOUBLE_EQ(back.rank_epochs[5].test_acc, 0.7);
  ASSERT_EQ(back.utilization.size(), 2u);
  EXPECT_DOUBLE_EQ(back.utilization[0].gpu_percent, 55.0);
  EXPECT_EQ(back.utilization[0].rank, 1);
  ASSERT_EQ(back.layers.size(), 3u);
  EXPECT_EQ(back.layers[2].name, "fc");
  EXPECT_EQ(back.layers[1].output_shape, "32x16x16");
  EXPECT_EQ(back.layers[2].parameters, 81930);
  EXPECT_TRUE(back.epochs[0].evaluated);
  EXPECT_TRUE(back.summary.overfit);
  EXPECT_EQ(back.summary.overfit_epoch, 2);
  EXPECT_EQ(back.summary.peak_memory_bytes, 3 << 20);
  for (const std::string& name : paths::list_directory(paths::parent(path)))
    EXPECT_EQ(name.find(".partial-"), std::string::npos) << name;
}

TEST(ResultsFile, NotAResultsFileIsAClearError) {
  const auto path = scratch("garbage.h5");
  std::ofstream(path) << "not hdf5";
  try {
    read_results(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// Opens a written results file and lets `change` alter it with the HDF5 API.
template <typename Change>
void alter(const std::string& path, Change change) {
  h5::Handle file = h5::open_file(path, true);
  change(file);
  file.close();
}

std::string results_error(const std::string& path) {
  try {
    read_results(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ResultsFile, MissingOrShortFieldsAreNamed) {
  const auto path = scratch("damaged.h5");
  write_results(path, sample("run-d", 32, 0.7));
  alter(path, [](hid_t file) {
    h5::Handle ranks = h5::open_group(file, "ranks");
    FT_CHECK_H5(H5Ldelete(ranks, "train_acc", H5P_DEFAULT));
  });
  EXPECT_EQ(results_error(path).rfind(path + ": /ranks/train_acc: missing HDF5 dataset", 0), 0u) << results_error(path);

  write_results(path, sample("run-d", 32, 0.7));
  alter(path, [](hid_t file) {
    h5::Handle ranks = h5::open_group(file, "ranks");
    FT_CHECK_H5(H5Ldelete(ranks, "device", H5P_DEFAULT));
    h5::write_strings(ranks, "device", {"only one"});
  });
  EXPECT_NE(results_error(path).find("/ranks/device: has 1 rows but hostname has 2"), std::string::npos)
      << results_error(path);

  write_results(path, sample("run-d", 32, 0.7));
  alter(path, [](hid_t file) {
    h5::Handle summary = h5::open_group(file, "summary");
    FT_CHECK_H5(H5Adelete(summary, "epochs_run"));
  });
  EXPECT_NE(results_error(path).find(": /summary/epochs_run: missing HDF5 attribute"), std::string::npos)
      << results_error(path);

  write_results(path, sample("run-d", 32, 0.7));
  alter(path, [](hid_t file) { h5::set_attr(file, "format_version", std::int64_t{1}); });
  EXPECT_NE(results_error(path).find(cat("format_version 1 is not ", kResultsFormatVersion)), std::string::npos)
      << results_error(path);
}

TEST(ResultsFields, ListingNamesEveryGroupAndType) {
  const auto json = results_fields_json();
  EXPECT_NE(json.find(cat("\"format_version\": ", kResultsFormatVersion)), std::string::npos) << json;
  for (const char* entry :
       {R"("group": "/epochs", "layout": "columns", "name": "evaluated", "stored": "int32")",
        R"("group": "/ranks", "layout": "columns", "name": "local_rank", "stored": "int32")",
        R"("group": "/ranks", "layout": "columns", "name": "comm_wait_s", "stored": "float64")",
        R"("group": "/ranks", "layout": "columns", "name": "train_acc", "stored": "float64")",
        R"("group": "/ranks", "layout": "columns", "name": "test_acc", "stored": "float64")",
        R"("group": "/rank_epochs", "layout": "columns", "name": "rank", "stored": "int32")",
        R"("group": "/rank_epochs", "layout": "columns", "name": "test_loss", "stored": "float64")",
        R"("group": "/model", "layout": "columns", "name": "output_shape", "stored": "string")",
        R"("group": "/summary", "layout": "attributes", "name": "overfit", "stored": "int64")",
        R"("group": "/", "layout": "text_dataset", "name": "config", "stored": "string")"})
    EXPECT_NE(json.find(entry), std::string::npos) << entry;
}

TEST(Report, CourseworkColumnsPerRankRowsAndModel) {
  auto run = sample("run-c", 32, 0.7);
  run.config_yaml += "train:\n  accumulation_steps: 2\n";
  const auto md = report_table({run}, {});
  EXPECT_NE(md.find("| 32 (global 128) |"), std::string::npos) << "32 x 2 ranks x 2 micro-batches: " << md;
  EXPECT_NE(md.find("| forward_s | backward_s | comm_wait_s |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1.50 |"), std::string::npos) << "mean forward seconds over the ranks: " << md;
  EXPECT_NE(md.find("| Test GPU | 60.0 | 90.00 |"), std::string::npos) << "device, mean GPU %, train acc: " << md;
  auto single = sample("run-1", 32, 0.7);
  single.provenance.world_size = 1;
  EXPECT_NE(report_table({single}, {}).find("| 32 | fp32 |"), std::string::npos);

  const auto ranks = per_rank_table({run}, false);
  EXPECT_NE(ranks.find("| run-c | 1 | node7 | Test GPU | 0 | 0.00 | 3.00 | 0.00 | 1.25 | 0.00 | 0.00 | 1.0 | 0.3750 | "
                       "87.50 | 0.6250 | 81.25 |"),
            std::string::npos)
      << ranks;
  const auto model = model_tables({run}, false);
  EXPECT_NE(model.find("### run-c (simple_cnn)"), std::string::npos) << model;
  EXPECT_NE(model.find("| max_pool2d | 32x16x16 | 0 |"), std::string::npos) << model;
  EXPECT_NE(model.find("| total |  | 82826 |"), std::string::npos) << model;
  EXPECT_NE(model_tables({run}, true).find("run-c,fc,10,81930\n"), std::string::npos);
}

TEST(Report, MarkdownAndCsvWithConfigKeysAndNumericSort) {
  const std::vector<RunRecord> runs = {sample("b128", 128, 0.6), sample("b16", 16, 0.5), sample("b32", 32, 0.55)};
  ReportOptions options;
  options.sort_by = "batch";
  options.extra_keys = {"optimizer.name"};
  const auto md = report_table(runs, options);
  EXPECT_LT(md.find("| b16 |"), md.find("| b32 |"));
  EXPECT_LT(md.find("| b32 |"), md.find("| b128 |"));
  EXPECT_NE(md.find("| adam |"), std::string::npos);
  EXPECT_NE(md.find("from epoch 2"), std::string::npos);
  options.csv = true;
  options.sort_by = "optimizer.lr";
  const auto csv = report_table(runs, options);
  EXPECT_EQ(csv.rfind("run,model,dataset,ranks,backend,batch", 0), 0u) << csv;
  EXPECT_NE(csv.find(",wall_s,train_s,img_per_s,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",7.50,1234,"), std::string::npos) << "train_s sums the three 2.5 s epochs: " << csv;
  EXPECT_EQ(config_value(runs[0], "data.batch_size"), "128");

  auto mixed = runs;
  mixed[1].provenance.world_size = 1;
  ReportOptions grouped;
  grouped.group_by = "ranks";
  grouped.sort_by = "batch";
  const auto tables = report_table(mixed, grouped);
  ASSERT_NE(tables.find("### ranks = 1"), std::string::npos) << tables;
  ASSERT_NE(tables.find("### ranks = 2"), std::string::npos) << tables;
  EXPECT_LT(tables.find("### ranks = 1"), tables.find("| b16 |"));
  EXPECT_GT(tables.find("| b32 |"), tables.find("### ranks = 2"));
  grouped.csv = true;
  const auto csv_grouped = report_table(mixed, grouped);
  EXPECT_EQ(csv_grouped.rfind("ranks,run,model", 0), 0u) << csv_grouped;
  EXPECT_NE(csv_grouped.find("\n1,b16,"), std::string::npos) << csv_grouped;
  EXPECT_EQ(config_value(runs[0], "missing.key"), "");
}

}  // namespace
}  // namespace ft
