// The steps of an evaluation: the config it runs with (stored, or --config with the stored model section),
// the model placed on this rank's device, this rank's slice of the split normalised as the model was
// trained, the scores reduced over all ranks, and the record that the command prints and writes.
#include "evaluation/model_evaluation.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "config/loader.h"
#include "config/options.h"
#include "data/dataset.h"
#include "models/channels_last.h"
#include "results/class_metrics.h"
#include "runtime/error.h"
#include "runtime/world.h"
#include "shard/shard_reader.h"
#include "device/device_setup.h"
#include "checkpoint/model_file.h"
#include "evaluation/split_scoring.h"

namespace ft {
namespace {

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

// The stored config with --config's settings in its place (its model section must be the stored one),
// and the command line's overrides. No gradients travel, so ranks may share a GPU.
Config evaluation_config(const EvaluationRequest& r, const Config& stored, const Config* given) {
  Config c = stored;
  if (given) {
    const auto differences = model_differences(stored, *given);
    FT_REQUIRE(differences.empty(), "--config ", r.config_path, ": its model section differs from the one ",
               r.model_path, " was trained with (", joined(differences), "); evaluate needs the trained model's");
    c = *given;
  }
  if (!r.data_dir.empty()) c.data.path = r.data_dir;
  if (r.tta) c.train.tta = *r.tta;
  if (r.batch > 0) c.data.test_batch_size = r.batch;
  c.train.device = r.device;
  c.distributed.backend = BackendName::mpi;
  c.distributed.allow_device_sharing = true;
  return c;
}

// The device of this rank for --device (placement's messages speak of train.device, which --device sets).
at::Device placed(const Config& c, const EvaluationRequest& r, const World& world) {
  try {
    return place_rank(c, world);
  } catch (const Error& e) {
    throw Error(cat("--device ", choice_name(r.device), ": ", e.what()));
  }
}

// fp16 autocast needs a GPU: on the CPU a network trained in fp16 is evaluated in fp32 (bf16 autocasts there).
void fit_precision(Config& c, const at::Device& device, const World& world) {
  if (device.is_cuda() || c.precision.dtype != Precision::fp16) return;
  if (world.rank() == 0)
    std::printf("evaluate: precision.dtype fp16 needs a GPU; evaluating in fp32 on the CPU\n"), std::fflush(stdout);
  c.precision.dtype = Precision::fp32;
}

// This rank's contiguous slice of the split on `device` (data.limit_test/limit_train applied, sliced as
// the trainer slices), after checking that the data fits the model.
struct Slice {
  std::unique_ptr<DeviceDataset> data;
  std::int64_t first = 0, total = 0;
};

Slice load_slice(const Config& c, const EvaluationRequest& r, const ModelInfo& info, const World& world,
                 const at::Device& device) {
  const ShardReader reader(c.data.path, r.split);
  require_compatible_data(info, reader.meta(), r.model_path, c.data.path);
  const std::int64_t limit = r.split == "test" ? c.data.limit_test : c.data.limit_train;
  Slice s;
  s.total = limit > 0 ? std::min(reader.total(), limit) : reader.total();
  FT_REQUIRE(world.size() <= s.total, world.size(), " ranks but the ", r.split, " split of ", c.data.path,
             " has only ", s.total, " images: use fewer ranks");
  const auto range = slice_of(s.total, world.rank(), world.size());
  s.first = range.first;
  s.data = std::make_unique<DeviceDataset>(reader.read(range.first, range.second), device);
  return s;
}

// Batches without augmentation, normalised with the mean and std the model was trained with.
AugmentParams model_params(const DeviceDataset& data, const ModelInfo& info, bool normalize) {
  AugmentParams p = data.augment_params(0, false, 0, false);
  p.train = false;
  set_normalization(p, info.mean, info.std, normalize, cat("the model's data set ", info.dataset));
  return p;
}

void place_network(Network& net, const at::Device& device, const EvalOptions& options) {
  net.to(device, options.input_dtype);
  if (options.channels_last) use_channels_last(net);
  net.eval();
}

EvaluationRecord make_record(const EvaluationRequest& r, const Config& c, const ModelInfo& info,
                             SplitScores&& scores) {
  EvaluationRecord record;
  auto& s = record.summary;
  const int classes = static_cast<int>(info.class_names.size());
  s = {r.split, r.model_path, c.data.path, info.dataset, choice_name(c.model.name), choice_name(c.train.tta),
       scores.images, scores.loss_sum / std::max<std::int64_t>(1, scores.images),
       c.regularization.label_smoothing, 0, 0, top_k_of(classes)};
  const double images = static_cast<double>(std::max<std::int64_t>(1, scores.images));
  s.top1 = static_cast<double>(confusion_correct(scores.confusion, classes)) / images;
  s.top5 = static_cast<double>(scores.top_k_hits) / images;
  const ClassScores per_class = class_scores(scores.confusion, classes);
  for (int k = 0; k < classes; ++k)
    record.classes.push_back({info.class_names[k], per_class.precision[k], per_class.recall[k], per_class.accuracy[k],
                              per_class.support[k], per_class.predicted[k]});
  record.confusion = std::move(scores.confusion);
  record.logits = std::move(scores.logits);
  record.labels = std::move(scores.labels);
  return record;
}

}  // namespace

void validate_request(const EvaluationRequest& r) {
  FT_REQUIRE(!r.model_path.empty(), "--checkpoint is required: a <run>.model file or a training checkpoint");
  FT_REQUIRE(r.split == "test" || r.split == "train", "--split '", r.split, "' is not a split: use test or train");
  FT_REQUIRE(r.batch >= 0, "--batch ", r.batch, " must be positive");
  FT_REQUIRE(r.keep_logits >= 0, "--logits ", r.keep_logits, " must not be negative");
}

std::vector<std::string> model_differences(const Config& a, const Config& b) {
  Config left = a, right = b;
  const auto left_options = option_table(left), right_options = option_table(right);
  std::vector<std::string> differences;
  for (std::size_t i = 0; i < left_options.size(); ++i) {
    const auto& key = left_options[i].key;
    if (key.rfind("model.", 0) != 0) continue;
    const std::string x = YAML::Dump(left_options[i].value()), y = YAML::Dump(right_options[i].value());
    if (x != y) differences.push_back(cat(key, ": ", x, " in the model, ", y, " in --config"));
  }
  return differences;
}

EvaluationRecord evaluate_model(const EvaluationRequest& r, const World& world) {
  validate_request(r);
  std::unique_ptr<Config> given;
  if (!r.config_path.empty()) given = std::make_unique<Config>(load_config(r.config_path));
  const std::string data_dir = !r.data_dir.empty() ? r.data_dir : given ? given->data.path : "";
  TrainedModel model = load_trained_model(r.model_path, data_dir);
  Config c = evaluation_config(r, model.info.config, given.get());
  const at::Device device = placed(c, r, world);
  fit_precision(c, device, world);
  const Slice slice = load_slice(c, r, model.info, world, device);

  ScoringOptions options;
  options.eval = eval_options(c);
  options.classes = static_cast<int>(model.info.class_names.size());
  options.first = slice.first;
  options.keep_logits = std::min(r.keep_logits, slice.total);
  place_network(*model.network, device, options.eval);
  auto scores = score_split(*model.network, *slice.data, model_params(*slice.data, model.info, c.data.normalize),
                            options, world);
  return make_record(r, c, model.info, std::move(scores));
}

}  // namespace ft
