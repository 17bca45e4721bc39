// `fusetrain report FILE...`: a markdown (or CSV) table of the given results files, sorted and with
// extra config-key columns on request, per-rank rows or model summaries; `--confusion` shows evaluation
// files' confusion matrices; `--fields` lists the results file's fields as JSON for other readers;
// `--tensorboard` writes TensorBoard event files of results files. Never needs MPI.
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <map>

#include "app/commands.h"
#include "app/error_text.h"
#include "io/paths.h"
#include "monitor/results_events.h"
#include "results/detail_tables.h"
#include "results/evaluation_file.h"
#include "results/evaluation_tables.h"
#include "results/report_table.h"
#include "results/results_file.h"
#include "results/table_render.h"
#include "runtime/error.h"

namespace po = boost::program_options;

namespace ft {
namespace {

// Markdown: a heading and the matrix per file; CSV: the matrices one after another, each with its header.
std::string confusion_tables(const std::vector<std::string>& files, bool csv) {
  std::string out;
  for (const auto& file : files) {
    const EvaluationRecord record = read_evaluation(file);
    const auto& s = record.summary;
    if (!csv)
      out += cat("### ", file, ": ", s.split, " split, ", s.images, " images, accuracy ", fixed(100 * s.top1, 2),
                 "% (rows: true class, columns: predicted class)\n\n");
    out += confusion_table(record, csv);
    if (!csv) out += "\n";
  }
  return out;
}

// One event folder per run under `out_dir`, named after the run. Two runs of one name would share a folder,
// and a folder holding event files would mix runs without --force: both are refused before anything is written.
std::string tensorboard_folders(const std::vector<std::string>& files, const std::string& out_dir, bool force) {
  std::map<std::string, std::string> file_of;  // run name -> results file
  std::vector<RunRecord> runs;
  for (const auto& file : files) {
    runs.push_back(read_results(file));
    const std::string& name = runs.back().name;
    const auto [seen, fresh] = file_of.emplace(name, file);
    FT_REQUIRE(fresh, "results files ", seen->second, " and ", file, " are both of a run named '", name,
               "': their event files would share ", paths::join(out_dir, name), "; convert them one at a time into "
               "different --tensorboard folders");
    check_events_folder(paths::join(out_dir, name), force);
  }
  std::string out;
  for (const auto& run : runs)
    out += cat("tensorboard: ", write_run_events(run, paths::join(out_dir, run.name)), "\n");
  return out + cat("view them with: tensorboard --logdir ", out_dir, "\n");
}

}  // namespace

int report_command(int argc, char** argv) {
  po::options_description options("fusetrain report: table of results files\n\n"
                                  "usage: fusetrain report [--csv] [--sort KEY] [--group KEY] [--key CONFIG.KEY ...] FILE.h5...\n"
                                  "       fusetrain report --per-rank [--csv] FILE.h5...\n"
                                  "       fusetrain report --segments [--csv] FILE.h5...\n"
                                  "       fusetrain report --model [--csv] FILE.h5...\n"
                                  "       fusetrain report --confusion [--csv] EVALUATION.h5...\n"
                                  "       fusetrain report --tensorboard OUT_DIR [--force] FILE.h5...\n"
                                  "       fusetrain report --fields\n\n"
                                  "options");
  options.add_options()
      ("csv", "CSV instead of markdown")
      ("sort", po::value<std::string>(), "sort by a column (e.g. img_per_s, batch) or a config key (e.g. optimizer.lr)")
      ("key,k", po::value<std::vector<std::string>>()->composing(), "add a config key as a column (repeatable)")
      ("group", po::value<std::string>(), "one table per value of a column or config key (CSV: a leading column)")
      ("per-rank", "one row per rank: time split, peak memory, train and test loss and accuracy on its own slices")
      ("segments", "one row per segment (start or resume) of each run: ranks, nodes, batch split, start, wall time")
      ("model", "each run's model summary: layers, output shapes, parameters")
      ("confusion", "the confusion matrix of evaluation files (written by fusetrain evaluate), with class names")
      ("tensorboard", po::value<std::string>(), "write TensorBoard event files of the runs: OUT_DIR/<run name>/, "
       "the per-epoch figures under the tags a live run logs")
      ("force", "with --tensorboard: replace event files already in a run's folder")
      ("fields", "every field of the results file as JSON (group, name, stored type, meaning) and exit")
      ("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("files", po::value<std::vector<std::string>>(), "results files");
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("files", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "fusetrain report: %s\n", e.what());
    return 2;
  }
  if (vm.count("help")) return std::cout << options, 0;
  if (vm.count("fields")) return std::cout << results_fields_json(), 0;
  if (!vm.count("files")) {
    std::fprintf(stderr, "fusetrain report: no results files given\n");
    std::cerr << options;
    return 2;
  }
  try {
    const auto& files = vm["files"].as<std::vector<std::string>>();
    if (vm.count("confusion")) return std::cout << confusion_tables(files, vm.count("csv") > 0), 0;
    if (vm.count("tensorboard"))
      return std::cout << tensorboard_folders(files, vm["tensorboard"].as<std::string>(), vm.count("force") > 0), 0;
    std::vector<RunRecord> runs;
    for (const auto& f : files) runs.push_back(read_results(f));
    const bool csv = vm.count("csv") > 0;
    if (vm.count("per-rank")) return std::cout << per_rank_table(runs, csv), 0;
    if (vm.count("segments")) return std::cout << segment_table(runs, csv), 0;
    if (vm.count("model")) return std::cout << model_tables(runs, csv), 0;
    ReportOptions report;
    report.csv = csv;
    if (vm.count("sort")) report.sort_by = vm["sort"].as<std::string>();
    if (vm.count("group")) report.group_by = vm["group"].as<std::string>();
    if (vm.count("key")) report.extra_keys = vm["key"].as<std::vector<std::string>>();
    std::cout << report_table(runs, report);
  } catch (const std::exception& e) {
    return report_error("fusetrain report", e);
  }
  return 0;
}

}  // namespace ft
