// `fusetrain export`: a trained network (model file or checkpoint) as safetensors or a torch.load-able
// file, under LibTorch's parameter names, for tools/export to load into the PyTorch twins (tools/pytorch_twins).
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>

#include "app/command_line.h"
#include "app/commands.h"
#include "app/error_text.h"
#include "export/export_formats.h"
#include "export/export_metadata.h"
#include "io/atomic_file.h"
#include "io/output_claim.h"
#include "runtime/error.h"
#include "checkpoint/model_file.h"

namespace po = boost::program_options;

namespace ft {
namespace {

struct ExportRequest {
  std::string checkpoint, format, out, data;
  bool force = false;
};

// The bytes of `model` in `format`; an unknown format was refused before the model was read.
std::string export_bytes(TrainedModel& model, const std::string& format) {
  const NamedTensors tensors = model_state(*model.network);
  if (format == "safetensors") return safetensors_bytes(tensors, export_metadata_text(model.info));
  return torch_save_bytes(tensors, export_metadata_value(model.info));
}

void run_export(const ExportRequest& r) {
  FT_REQUIRE(r.format == "safetensors" || r.format == "torch", "--format '", r.format,
             "' is not an export format: use safetensors or torch");
  std::vector<std::pair<std::string, std::string>> inputs = {{"--checkpoint", r.checkpoint}};
  claim_output({r.out, "--out", "--force", r.force, inputs});  // before reading anything
  TrainedModel model = load_trained_model(r.checkpoint, r.data);
  if (!r.data.empty())
    add_inputs(inputs, "--data", r.data);
  else
    add_inputs(inputs, "data.path", model.info.config.data.path);
  claim_output({r.out, "--out", "--force", r.force, inputs});  // nor the data describing the model
  write_file_atomically(r.out, export_bytes(model, r.format));
  std::printf("export: %s (%s, %zu tensors) -> %s\n", r.checkpoint.c_str(), r.format.c_str(),
              model_state(*model.network).size(), r.out.c_str());
}

}  // namespace

int export_command(int argc, char** argv) {
  po::options_description options(
      "fusetrain export: write a trained network for PyTorch and other tools\n\n"
      "usage: fusetrain export --checkpoint F --format safetensors|torch --out PATH [--force]\n\n"
      "The tensors keep fusetrain's parameter names, which the PyTorch twins in tools/pytorch_twins share;\n"
      "the metadata holds the model config, input shape, class names, mean and std.\n"
      "`python tools/export/fusetrain_model.py PATH --onnx OUT.onnx` rebuilds the network and writes ONNX.\n\n"
      "options");
  ExportRequest r;
  options.add_options()
      ("checkpoint", po::value(&r.checkpoint)->required(), "model file (<run>.model) or training checkpoint (.ckpt)")
      ("format", po::value(&r.format)->required(), "safetensors, or torch (a file torch.load reads)")
      ("out", po::value(&r.out)->required(), "file to write (refused when it exists, unless --force)")
      ("force", po::bool_switch(&r.force), "replace an existing --out file (never the --checkpoint file itself)")
      ("data", po::value(&r.data), "shard folder describing a checkpoint's data (default: its data.path)")
      ("help,h", "show this help");
  po::variables_map vm;
  if (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) return std::cout << options, 0;
  if (!parse_command_line(options, argc, argv, vm, "fusetrain export")) return 2;
  try {
    run_export(r);
  } catch (const std::exception& e) {
    return report_error("fusetrain export", e);
  }
  return 0;
}

}  // namespace ft
