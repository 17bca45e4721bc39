// `fusetrain evaluate`: score a trained network (model file or checkpoint) on a split, alone or under
// mpirun with each rank on its slice; rank 0 prints the per-class table and writes the evaluation file.
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>

#include "app/command_line.h"
#include "app/commands.h"
#include "app/error_text.h"
#include "checkpoint/model_file.h"
#include "config/loader.h"
#include "io/output_claim.h"
#include "io/paths.h"
#include "results/evaluation_file.h"
#include "results/evaluation_tables.h"
#include "runtime/error.h"
#include "runtime/launch_env.h"
#include "runtime/world.h"
#include "evaluation/model_evaluation.h"

namespace po = boost::program_options;

namespace ft {
namespace {

// Beside the model: <stem>-eval-<split>.h5.
std::string default_output(const EvaluationRequest& r) {
  return paths::join(paths::parent(r.model_path), paths::stem(r.model_path) + "-eval-" + r.split + ".h5");
}

EvaluationRequest request_from(const po::variables_map& vm) {
  EvaluationRequest r;
  if (vm.count("checkpoint")) r.model_path = vm["checkpoint"].as<std::string>();
  if (vm.count("config")) r.config_path = vm["config"].as<std::string>();
  if (vm.count("data")) r.data_dir = vm["data"].as<std::string>();
  r.split = vm["split"].as<std::string>();
  if (vm.count("tta")) r.tta = choice_from<Tta>("--tta", vm["tta"].as<std::string>());
  r.batch = vm["batch"].as<int>();
  r.device = choice_from<DeviceChoice>("--device", vm["device"].as<std::string>());
  r.keep_logits = vm["logits"].as<std::int64_t>();
  validate_request(r);
  return r;
}

// Where the evaluation goes, checked before any image is scored: --out as given (an existing file only
// with --force), or the default name, numbered when an earlier evaluation holds it.
std::string claim_evaluation_output(const EvaluationRequest& r, const std::string& out, bool force) {
  std::vector<std::pair<std::string, std::string>> inputs = {{"--checkpoint", r.model_path}};
  if (!r.config_path.empty()) inputs.emplace_back("--config", r.config_path);
  if (!r.data_dir.empty())
    add_inputs(inputs, "--data", r.data_dir);
  else if (!r.config_path.empty())
    add_inputs(inputs, "data.path", load_config(r.config_path).data.path);
  else
    add_inputs(inputs, "data.path", load_model_info(r.model_path).config.data.path);
  if (!out.empty()) {
    claim_output({out, "--out", "--force", force, inputs});
    return out;
  }
  const std::string wanted = default_output(r);
  const std::string path = first_free_path(wanted);
  claim_output({path, "evaluation file", "--out", false, inputs});
  if (path != wanted)
    std::printf("note: %s holds an earlier evaluation (kept): this one is written to %s\n", wanted.c_str(),
                path.c_str());
  return path;
}

void publish(const EvaluationRecord& record, const std::string& out) {
  std::printf("%s\nconfusion matrix (rows: true class, columns: predicted class):\n\n%s\n%s\nevaluation: %s\n",
              class_table(record, false).c_str(), confusion_table(record, false).c_str(),
              summary_line(record.summary).c_str(), out.c_str());
  std::fflush(stdout);
}

int evaluate(const EvaluationRequest& request, const std::string& wanted_out, bool force, int argc, char** argv) {
  World world(&argc, &argv);
  try {
    const std::string out = world.rank() == 0 ? claim_evaluation_output(request, wanted_out, force) : "";
    const EvaluationRecord record = evaluate_model(request, world);
    if (world.rank() == 0) {
      write_evaluation(out, record);
      publish(record, out);
    }
    world.barrier();
  } catch (const std::exception& e) {
    if (world.size() > 1) world.abort(error_text(e));
    return report_error("fusetrain evaluate", e);
  }
  return 0;
}

po::options_description evaluate_options() {
  po::options_description options(
      "fusetrain evaluate: score a trained network on a split of its data\n\n"
      "usage: [mpirun -np N] fusetrain evaluate --checkpoint FILE [--config C] [--data DIR] [--split test|train]\n"
      "                      [--tta [none|flip|flip_translate]] [--out FILE.h5] [--logits N] [--batch N]\n"
      "                      [--device auto|cpu|cuda] [--force]\n\noptions");
  options.add_options()
      ("checkpoint", po::value<std::string>(), "the <run>.model file written after training, or a checkpoint (.ckpt)")
      ("config", po::value<std::string>(), "a config whose data and evaluation settings replace the stored ones "
       "(its model section must equal the trained model's)")
      ("data", po::value<std::string>(), "data folder (default: data.path of the run's config)")
      ("split", po::value<std::string>()->default_value("test"), "split to score: test or train")
      ("tta", po::value<std::string>()->implicit_value("flip_translate"),
       "test-time augmentation: none, flip or flip_translate (alone: flip_translate; default: train.tta)")
      ("out", po::value<std::string>(), "evaluation file, refused when it exists unless --force (default: "
       "<model stem>-eval-<split>.h5 beside the model, numbered -2, -3, ... when an earlier evaluation holds it)")
      ("force", "replace an existing --out file")
      ("logits", po::value<std::int64_t>()->default_value(0),
       "also store the fp32 logits and labels of the split's first N images (no test-time augmentation)")
      ("batch", po::value<int>()->default_value(0), "images per forward pass (default: data.test_batch_size)")
      ("device", po::value<std::string>()->default_value("auto"), "auto (a GPU when one is visible), cpu or cuda")
      ("help,h", "show this help");
  return options;
}

}  // namespace

int evaluate_command(int argc, char** argv) {
  const po::options_description options = evaluate_options();
  po::variables_map vm;
  if (!parse_command_line(options, argc, argv, vm, "fusetrain evaluate")) return 2;
  if (vm.count("help")) return std::cout << options, 0;
  EvaluationRequest request;
  try {
    request = request_from(vm);
  } catch (const Error& e) {
    // Every rank sees the same command line: one message is enough.
    if (launcher_rank() == 0) report_error("fusetrain evaluate", e, 2);
    return 2;
  }
  const std::string out = vm.count("out") ? vm["out"].as<std::string>() : "";
  return evaluate(request, out, vm.count("force") > 0, argc, argv);
}

}  // namespace ft
