// `fusetrain predict --checkpoint F IMAGE_OR_DIR...`: the top-K classes and their probabilities for image
// files, from a model file or training checkpoint, as CSV on stdout or written atomically to --out.
#include <boost/program_options.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "app/command_line.h"
#include "app/commands.h"
#include "data_prep/image_batch.h"
#include "data_prep/image_inputs.h"
#include "io/atomic_file.h"
#include "results/table_render.h"
#include "runtime/error.h"
#include "train/prediction.h"

namespace po = boost::program_options;

namespace ft {
namespace {

struct PredictOptions {
  std::string model, data_dir, out;
  std::vector<std::string> inputs;
  int top = 1;
  std::int64_t batch = 256;
  bool resize = true;
};

// Where the CSV goes: stdout, or a temporary beside --out that replaces it only once complete.
class CsvSink {
 public:
  explicit CsvSink(const std::string& path) {
    if (path.empty()) return;
    remove_stale_temporaries(path);
    atomic_ = std::make_unique<AtomicFile>(path);
    file_.open(atomic_->temp_path(), std::ios::binary | std::ios::trunc);
    FT_REQUIRE(file_.is_open(), "--out ", path, ": cannot create ", atomic_->temp_path(), ": ", std::strerror(errno));
  }
  void write(const std::string& text) {
    if (!atomic_) {
      FT_REQUIRE(std::fwrite(text.data(), 1, text.size(), stdout) == text.size(), "cannot write to stdout");
      return;
    }
    FT_REQUIRE(file_.write(text.data(), static_cast<std::streamsize>(text.size())), "--out ",
               atomic_->target(), ": cannot write (is the file system full?)");
  }
  void commit() {
    if (!atomic_) return void(std::fflush(stdout));
    file_.close();
    FT_REQUIRE(!file_.fail(), "--out ", atomic_->target(), ": cannot write (is the file system full?)");
    atomic_->commit();
  }

 private:
  std::unique_ptr<AtomicFile> atomic_;
  std::ofstream file_;
};

TableRow csv_header(int k) {
  TableRow header = {"path"};
  for (int i = 1; i <= k; ++i) header.insert(header.end(), {cat("class", i), cat("prob", i)});
  return header;
}

// One row per file: its path, then the k most probable classes and their probabilities, best first.
std::vector<TableRow> top_k_rows(const std::vector<std::string>& files, const at::Tensor& probabilities, int k,
                                 const std::vector<std::string>& class_names) {
  const auto [values, indices] = probabilities.topk(k, 1, /*largest=*/true, /*sorted=*/true);
  const auto v = values.accessor<float, 2>();
  const auto c = indices.accessor<std::int64_t, 2>();
  std::vector<TableRow> rows;
  for (std::size_t i = 0; i < files.size(); ++i) {
    TableRow row = {files[i]};
    const auto r = static_cast<std::int64_t>(i);
    for (int j = 0; j < k; ++j)
      row.insert(row.end(), {class_names[static_cast<std::size_t>(c[r][j])], fixed(v[r][j], 6)});
    rows.push_back(std::move(row));
  }
  return rows;
}

void note(const std::string& text) { std::fprintf(stderr, "fusetrain predict: %s\n", text.c_str()); }

std::string skipped_note(const std::vector<std::string>& skipped) {
  const bool one = skipped.size() == 1;
  return cat("skipped ", skipped.size(), one ? " folder entry that is" : " folder entries that are",
             " hidden or not .jpg/.jpeg/.png (first: ", skipped.front(), ")");
}

int predict(const PredictOptions& o) {
  const prep::ImageInputs inputs = prep::list_image_inputs(o.inputs);
  CsvSink sink(o.out);
  const TrainedModel model = load_trained_model(o.model, o.data_dir);
  const ModelInfo& info = model.info;
  if (!inputs.skipped.empty()) note(skipped_note(inputs.skipped));
  prep::ImageBatchLoader loader({info.input.height, info.input.width, info.input.channels}, o.resize);
  const int k = std::min<int>(o.top, static_cast<int>(info.class_names.size()));
  std::string text;
  render_table(text, csv_header(k), {}, true);
  sink.write(text);
  for (std::size_t begin = 0; begin < inputs.files.size(); begin += static_cast<std::size_t>(o.batch)) {
    const auto end = std::min(inputs.files.size(), begin + static_cast<std::size_t>(o.batch));
    const std::vector<std::string> files(inputs.files.begin() + begin, inputs.files.begin() + end);
    prep::RawSplit images = loader.load(files);
    const at::Tensor probabilities = class_probabilities(model, std::move(images.images), images.count());
    text.clear();
    render_table(text, {}, top_k_rows(files, probabilities, k, info.class_names), true, false);
    sink.write(text);
  }
  if (loader.resized_count() > 0) note(loader.resize_note());
  sink.commit();
  return 0;
}

int usage_error(const std::string& text) {
  std::fprintf(stderr, "fusetrain predict: %s (see --help)\n", text.c_str());
  return 2;
}

}  // namespace

int predict_command(int argc, char** argv) {
  PredictOptions o;
  po::options_description options(
      "fusetrain predict: the most probable classes of image files (JPEG or PNG) under a trained model\n\n"
      "usage: fusetrain predict --checkpoint FILE [options] IMAGE_OR_FOLDER...\n"
      "  folders are searched recursively for *.jpg, *.jpeg and *.png; files named directly are read\n"
      "  whatever their name. Output: CSV path,class1,prob1,... one row per image, in path order\n\noptions");
  options.add_options()
      ("checkpoint,c", po::value(&o.model), "model file (<run>.model) or training checkpoint")
      ("top,k", po::value(&o.top)->default_value(1), "classes per image, most probable first (at most the class count)")
      ("out,o", po::value(&o.out), "write the CSV to this file (atomically) instead of stdout")
      ("batch,b", po::value(&o.batch)->default_value(256), "images decoded and run at a time")
      ("no-resize", "refuse images whose size differs from the network's input instead of resizing them")
      ("data", po::value(&o.data_dir), "shards whose description a checkpoint needs (default: its data.path)")
      ("help,h", "show this help");
  po::options_description all;
  all.add(options).add_options()("inputs", po::value(&o.inputs));
  po::positional_options_description positional;
  positional.add("inputs", -1);
  po::variables_map vm;
  if (!parse_command_line(all, argc, argv, vm, "fusetrain predict", &positional)) return 2;
  if (vm.count("help")) return std::cout << options, 0;
  if (o.model.empty()) return usage_error("--checkpoint FILE is required");
  if (o.inputs.empty()) return usage_error("no image files or folders given");
  if (o.top < 1) return usage_error(cat("--top must be at least 1, not ", o.top));
  if (o.batch < 1) return usage_error(cat("--batch must be at least 1, not ", o.batch));
  o.resize = vm.count("no-resize") == 0;
  return predict(o);
}

}  // namespace ft
