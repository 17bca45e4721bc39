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
#include "io/output_claim.h"
#include "results/table_render.h"
#include "runtime/error.h"
#include "evaluation/prediction.h"

namespace po = boost::program_options;

namespace ft {
namespace {

struct PredictOptions {
  std::string model, data_dir, out;
  std::vector<std::string> inputs;
  int top = 1;
  std::int64_t batch = 256;
  bool resize = true;
  bool force = false;     // replace an existing --out
  bool skip_bad = false;  // leave unreadable images out (listed on stderr) instead of stopping
};

// Exit status of a run that wrote every readable image's row but left some images out (--skip-bad).
constexpr int kExitSomeSkipped = 3;

// Where the CSV goes: stdout, or a temporary beside --out that replaces it only once complete.
class CsvSink {
 public:
  explicit CsvSink(const PredictOptions& o) {
    const std::string& path = o.out;
    if (path.empty()) return;
    std::vector<std::pair<std::string, std::string>> inputs = {{"--checkpoint", o.model}};
    for (const auto& input : o.inputs) {
      inputs.emplace_back("an input", input);
      add_inputs(inputs, "an input", input);
    }
    add_inputs(inputs, "--data", o.data_dir);
    claim_output({path, "--out", "--force", o.force, inputs});
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

// One batch's images: all of them, or with --skip-bad the readable ones, each bad file noted on stderr.
prep::ImageBatchLoader::Partial load_batch(prep::ImageBatchLoader& loader, const std::vector<std::string>& files,
                                           bool skip_bad) {
  if (!skip_bad) {
    try {
      return {loader.load(files), files, {}};
    } catch (const Error& e) {
      throw Error(cat(e.what(), " (--skip-bad leaves unreadable images out and lists them)"));
    }
  }
  prep::ImageBatchLoader::Partial batch = loader.load_readable(files);
  for (const auto& why : batch.bad) note(cat("skipped: ", why));
  return batch;
}

// The CSV rows of the images, batch by batch; the header goes out with the first batch, so an image that
// stops the run before then leaves stdout empty. Returns the number of images left out.
std::size_t write_rows(const PredictOptions& o, const TrainedModel& model, const std::vector<std::string>& files,
                       CsvSink& sink, prep::ImageBatchLoader& loader) {
  const ModelInfo& info = model.info;
  const int k = std::min<int>(o.top, static_cast<int>(info.class_names.size()));
  std::string text;
  render_table(text, csv_header(k), {}, true);
  std::size_t bad = 0;
  for (std::size_t begin = 0; begin < files.size(); begin += static_cast<std::size_t>(o.batch)) {
    const auto end = std::min(files.size(), begin + static_cast<std::size_t>(o.batch));
    auto batch = load_batch(loader, {files.begin() + begin, files.begin() + end}, o.skip_bad);
    bad += batch.bad.size();
    if (!batch.kept.empty()) {
      const auto count = batch.split.count();
      const at::Tensor probabilities = class_probabilities(model, std::move(batch.split.images), count);
      render_table(text, {}, top_k_rows(batch.kept, probabilities, k, info.class_names), true, false);
    }
    sink.write(text);
    text.clear();
  }
  if (files.empty()) sink.write(text);
  return bad;
}

int predict(const PredictOptions& o) {
  const prep::ImageInputs inputs = prep::list_image_inputs(o.inputs);
  CsvSink sink(o);
  const TrainedModel model = load_trained_model(o.model, o.data_dir);
  const ModelInfo& info = model.info;
  if (!inputs.skipped.empty()) note(skipped_note(inputs.skipped));
  prep::ImageBatchLoader loader({info.input.height, info.input.width, info.input.channels}, o.resize);
  const std::size_t bad = write_rows(o, model, inputs.files, sink, loader);
  if (loader.resized_count() > 0) note(loader.resize_note());
  sink.commit();
  if (bad == 0) return 0;
  note(cat(bad, " of ", inputs.files.size(), " images could not be read and were left out (listed above); the CSV "
           "holds the other ", inputs.files.size() - bad, " (exit status ", kExitSomeSkipped, ")"));
  return kExitSomeSkipped;
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
      ("out,o", po::value(&o.out), "write the CSV to this file (atomically) instead of stdout; an existing file "
       "is refused unless --force")
      ("force", po::bool_switch(&o.force), "replace an existing --out file")
      ("skip-bad", po::bool_switch(&o.skip_bad), "leave out images that cannot be read or decoded, list them on "
       "stderr, write the other rows and exit with status 3")
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
