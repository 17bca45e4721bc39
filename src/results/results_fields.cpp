// The declarative tables of results fields and their JSON listing. Adding a field here adds it to the
// file, to the reader, to the rank gather and to `fusetrain report --fields`.
#include "results/results_fields.h"

#include <cstdio>
#include <sstream>

#include "runtime/error.h"

namespace ft {

const FieldGroup<RunRecord>& run_attribute_fields() {
  static const FieldGroup<RunRecord> group{"/", FieldLayout::attributes, {
      FT_FIELD(RunRecord, name, "run name (output.name, or model-data-ranks-timestamp)"),
      FT_FIELD(RunRecord, model, "model.name"),
      FT_FIELD(RunRecord, dataset, "data set name from the shards"),
      FT_FIELD(RunRecord, precision, "precision.dtype"),
      FT_FIELD(RunRecord, batch_size, "data.batch_size: images per rank per micro-batch"),
      FT_FIELD(RunRecord, model_file, "the trained network's file (fusetrain evaluate/export/predict), or empty"),
  }};
  return group;
}

const FieldGroup<RunRecord>& run_text_fields() {
  static const FieldGroup<RunRecord> group{"/", FieldLayout::text_datasets, {
      FT_FIELD_AS(RunRecord, "config", config_yaml, "the resolved config as YAML"),
  }};
  return group;
}

const FieldGroup<Provenance>& provenance_fields() {
  static const FieldGroup<Provenance> group{"/provenance", FieldLayout::attributes, {
      FT_FIELD(Provenance, program_version, "fusetrain version"),
      FT_FIELD(Provenance, git_commit, "commit the binary was built from"),
      FT_FIELD(Provenance, torch_version, "LibTorch version"),
      FT_FIELD(Provenance, cuda_version, "CUDA runtime version, or none"),
      FT_FIELD(Provenance, mpi_version, "MPI library version"),
      FT_FIELD(Provenance, command_line, "the fusetrain command line"),
      FT_FIELD(Provenance, started_at, "UTC start time, ISO 8601"),
      FT_FIELD(Provenance, backend, "gradient all-reduce backend"),
      FT_FIELD(Provenance, allreduce, "all-reduce algorithm the backend ran: flat or hierarchical"),
      FT_FIELD(Provenance, world_size, "number of ranks"),
      FT_FIELD(Provenance, node_count, "number of nodes"),
  }};
  return group;
}

const FieldGroup<EpochRecord>& epoch_fields() {
  static const FieldGroup<EpochRecord> group{"/epochs", FieldLayout::columns, {
      FT_FIELD(EpochRecord, epoch, "epoch number, 1-based"),
      FT_FIELD(EpochRecord, evaluated, "1 when the test split was evaluated after this epoch"),
      FT_FIELD(EpochRecord, train_loss, "mean training loss over all ranks"),
      FT_FIELD(EpochRecord, train_acc, "training accuracy over all ranks, in [0,1]"),
      FT_FIELD(EpochRecord, test_loss, "test loss (0 when not evaluated)"),
      FT_FIELD(EpochRecord, test_acc, "test accuracy in [0,1] (0 when not evaluated)"),
      FT_FIELD(EpochRecord, lr, "learning rate of the epoch's last step"),
      FT_FIELD(EpochRecord, epoch_time_s, "training seconds of the epoch, evaluation excluded"),
      FT_FIELD(EpochRecord, images_per_s, "training images per second, all ranks"),
      FT_FIELD(EpochRecord, weights_digest, "SHA-256 of the weights and buffers after the epoch (equal digests: "
               "the same weights, bit for bit)"),
      FT_FIELD(EpochRecord, optimizer_digest, "SHA-256 of the optimizer's state after the epoch"),
  }};
  return group;
}

const FieldGroup<RankRecord>& rank_fields() {
  static const FieldGroup<RankRecord> group{"/ranks", FieldLayout::columns, {
      FT_FIELD(RankRecord, hostname, "host the rank ran on"),
      FT_FIELD(RankRecord, device, "device model, e.g. the GPU's name"),
      FT_FIELD(RankRecord, local_rank, "rank among the ranks of its node (picks the node's GPU)"),
      FT_FIELD(RankRecord, peak_memory_bytes,
               "peak memory of the rank: CUDA peak allocated on a GPU, the process's peak resident set on the CPU"),
      FT_FIELD(RankRecord, peak_allocated_bytes,
               "peak bytes of live tensors in LibTorch's allocator of the rank's device during training (GPU: "
               "the same as peak_memory_bytes; CPU: LibTorch's CPU allocator, without the process's code and heap)"),
      FT_FIELD(RankRecord, train_images, "images in the rank's training slice"),
      FT_FIELD(RankRecord, allreduce_bytes, "gradient bytes all-reduced by the rank"),
      FT_FIELD(RankRecord, allreduce_s, "seconds spent in gradient all-reduce calls"),
      FT_FIELD(RankRecord, comm_hidden_fraction,
               "share of allreduce_s hidden behind backward: 1 - (seconds the training thread waited for the "
               "all-reduces to finish) / allreduce_s; per step the same as in total (0 without all-reduces)"),
      FT_FIELD(RankRecord, slow_step_share,
               "share of the compared steps in which the rank's compute (data, forward, backward, optimizer) exceeded "
               "the other ranks' median by more than distributed.straggler_share"),
      FT_FIELD(RankRecord, compute_excess,
               "median over the compared steps of the rank's compute over the other ranks' median, minus 1"),
      FT_FIELD_AS(RankRecord, "data_s", phase_s[0], "seconds loading and augmenting batches"),
      FT_FIELD_AS(RankRecord, "forward_s", phase_s[1], "seconds in the forward pass and loss"),
      FT_FIELD_AS(RankRecord, "backward_s", phase_s[2], "seconds in the backward pass"),
      FT_FIELD_AS(RankRecord, "comm_wait_s", phase_s[3], "seconds waiting for gradient communication"),
      FT_FIELD_AS(RankRecord, "optimizer_s", phase_s[4], "seconds in the optimizer step"),
      FT_FIELD_AS(RankRecord, "eval_s", phase_s[5], "seconds evaluating the test slice"),
      FT_FIELD(RankRecord, phase_clock,
               "clock of the phase times: host (steady clock; CPUs) or cuda_events (events on the compute stream)"),
      FT_FIELD(RankRecord, train_loss, "final epoch's training loss on this rank's slice"),
      FT_FIELD(RankRecord, train_acc, "final epoch's training accuracy on this rank's slice, in [0,1]"),
      FT_FIELD(RankRecord, test_images, "images in the rank's test slice"),
      FT_FIELD(RankRecord, test_loss, "final evaluation's test loss on this rank's test slice"),
      FT_FIELD(RankRecord, test_acc, "final evaluation's test accuracy on this rank's test slice, in [0,1]"),
  }};
  return group;
}

const FieldGroup<RankEpochRecord>& rank_epoch_fields() {
  static const FieldGroup<RankEpochRecord> group{"/rank_epochs", FieldLayout::columns, {
      FT_FIELD(RankEpochRecord, rank, "rank the row belongs to; one row per rank and evaluated epoch"),
      FT_FIELD(RankEpochRecord, epoch, "evaluated epoch, 1-based"),
      FT_FIELD(RankEpochRecord, train_loss, "the epoch's training loss on this rank's own batches"),
      FT_FIELD(RankEpochRecord, train_acc, "the epoch's training accuracy on this rank's own batches, in [0,1]"),
      FT_FIELD(RankEpochRecord, test_loss, "test loss on this rank's slice of the test split"),
      FT_FIELD(RankEpochRecord, test_acc, "test accuracy on this rank's slice of the test split, in [0,1]"),
  }};
  return group;
}

const FieldGroup<SegmentRecord>& segment_fields() {
  static const FieldGroup<SegmentRecord> group{"/segments", FieldLayout::columns, {
      FT_FIELD(SegmentRecord, segment, "1-based; one row per start or resume of the run, in order"),
      FT_FIELD(SegmentRecord, world_size, "ranks of the segment"),
      FT_FIELD(SegmentRecord, node_count, "nodes of the segment"),
      FT_FIELD(SegmentRecord, backend, "gradient all-reduce backend of the segment"),
      FT_FIELD(SegmentRecord, device, "rank 0's device model"),
      FT_FIELD(SegmentRecord, started_at, "UTC start time of the segment, ISO 8601"),
      FT_FIELD(SegmentRecord, start_epoch, "epoch the segment started in, 1-based"),
      FT_FIELD(SegmentRecord, start_step, "optimizer steps of that epoch done before the segment"),
      FT_FIELD(SegmentRecord, start_sample, "images of that epoch's global sample order trained on before the segment"),
      FT_FIELD(SegmentRecord, per_rank_batch, "images per rank per micro-batch (elastic.batch may re-split it)"),
      FT_FIELD(SegmentRecord, accumulation, "micro-batches per optimizer step"),
      FT_FIELD(SegmentRecord, global_batch, "images per optimizer step over all ranks"),
      FT_FIELD(SegmentRecord, lr_factor, "factor on optimizer.lr (elastic.batch: local with elastic.lr_scaling)"),
      FT_FIELD(SegmentRecord, wall_time_s, "seconds from the segment's start to its last checkpoint or the end"),
  }};
  return group;
}

const FieldGroup<UtilizationSample>& utilization_fields() {
  static const FieldGroup<UtilizationSample> group{"/utilization", FieldLayout::columns, {
      FT_FIELD(UtilizationSample, time_s, "seconds since the sampler started"),
      FT_FIELD(UtilizationSample, rank, "rank whose GPU was sampled"),
      FT_FIELD(UtilizationSample, gpu_percent, "GPU utilisation, percent"),
      FT_FIELD(UtilizationSample, memory_percent, "GPU memory in use, percent"),
  }};
  return group;
}

const FieldGroup<ModelLayer>& model_fields() {
  static const FieldGroup<ModelLayer> group{"/model", FieldLayout::columns, {
      FT_FIELD(ModelLayer, name, "layer (module name) or parameter-free operation, in forward order"),
      FT_FIELD(ModelLayer, output_shape, "output shape for one input image, e.g. 32x16x16"),
      FT_FIELD(ModelLayer, parameters, "parameters the layer owns"),
  }};
  return group;
}

const FieldGroup<RunSummary>& summary_fields() {
  static const FieldGroup<RunSummary> group{"/summary", FieldLayout::attributes, {
      FT_FIELD(RunSummary, wall_time_s, "seconds from start to results, summed over the run's segments"),
      FT_FIELD(RunSummary, train_time_s, "seconds of the epoch loop of the last segment (the one that finished)"),
      FT_FIELD(RunSummary, best_test_acc, "best test accuracy in [0,1]"),
      FT_FIELD(RunSummary, best_epoch, "epoch of the best test accuracy"),
      FT_FIELD(RunSummary, final_test_acc, "last evaluated test accuracy"),
      FT_FIELD(RunSummary, final_test_loss, "last evaluated test loss"),
      FT_FIELD(RunSummary, epochs_run, "epochs trained"),
      FT_FIELD(RunSummary, images_per_s, "training images per second, evaluation excluded"),
      FT_FIELD(RunSummary, peak_memory_bytes, "peak device memory, max over ranks"),
      FT_FIELD(RunSummary, overfit, "1 when the test loss rose over the overfitting window"),
      FT_FIELD(RunSummary, overfit_epoch, "first epoch of the rising-test-loss window (0: none)"),
      FT_FIELD(RunSummary, stopped_early, "1 when early stopping ended the run"),
      FT_FIELD(RunSummary, optimizer_steps, "optimizer steps taken"),
      FT_FIELD(RunSummary, skipped_steps, "steps skipped by the fp16 loss scaler"),
      FT_FIELD(RunSummary, bucket_mib, "fusion bucket size in MiB the run used (configured or autotuned)"),
      FT_FIELD(RunSummary, first_bucket_mib, "first fusion bucket size in MiB the run used"),
      FT_FIELD(RunSummary, last_bucket_mib, "most of the last fusion bucket in MiB the run used"),
      FT_FIELD(RunSummary, buckets_autotuned, "1 when distributed.autotune chose the bucket sizes"),
      FT_FIELD(RunSummary, graph_captures, "train.cuda_graphs: CUDA graphs captured in the last segment (0 or 1)"),
      FT_FIELD(RunSummary, graph_replays, "train.cuda_graphs: steps replayed from the graph in the last segment"),
      FT_FIELD(RunSummary, train_steps_s, "seconds of the epochs' training steps, evaluation and warm-up excluded: "
               "the sum of /epochs/epoch_time_s (report's train_s)"),
      FT_FIELD(RunSummary, warmup_steps, "train.warmup_steps: steps run in the last segment before its clocks started, "
               "on state then put back exactly"),
      FT_FIELD(RunSummary, warmup_s, "seconds of those steps and of putting the state back (0 without them)"),
      FT_FIELD(RunSummary, cold_s, "seconds from the start of the last segment's process (the kernel's record; the "
               "slowest rank's) to the end of the last epoch's training steps: start-up, data upload, warm-up and "
               "evaluations between epochs included"),
      FT_FIELD(RunSummary, straggler_rank, "the rank slow (by /ranks/slow_step_share) in more than half the compared "
               "steps, the others waiting for it; -1: none"),
      FT_FIELD(RunSummary, straggler_slow_share, "the straggler's slow_step_share (0 without one)"),
      FT_FIELD(RunSummary, straggler_excess, "the straggler's compute_excess (0 without one)"),
      FT_FIELD(RunSummary, straggler_wait_share,
               "the other ranks' all-reduce wait beyond the straggler's own, as a share of their compute and wait"),
      FT_FIELD(RunSummary, straggler_windows, "steps the straggler verdict compared (on GPUs windows of 50 steps; "
               "the last segment's, halved into pairs beyond 512)"),
  }};
  return group;
}

const FieldGroup<EvaluationSummary>& evaluation_fields() {
  static const FieldGroup<EvaluationSummary> group{"/evaluation", FieldLayout::attributes, {
      FT_FIELD(EvaluationSummary, split, "split evaluated: test or train"),
      FT_FIELD(EvaluationSummary, checkpoint, "model file or training checkpoint evaluated, as given"),
      FT_FIELD(EvaluationSummary, data, "data folder the images came from"),
      FT_FIELD(EvaluationSummary, dataset, "data set name from the shards"),
      FT_FIELD(EvaluationSummary, model, "model.name"),
      FT_FIELD(EvaluationSummary, tta, "test-time augmentation: none, flip or flip_translate"),
      FT_FIELD(EvaluationSummary, images, "images evaluated (data.limit_test/limit_train applied)"),
      FT_FIELD(EvaluationSummary, loss, "mean cross-entropy loss with the run's label smoothing"),
      FT_FIELD(EvaluationSummary, label_smoothing, "regularization.label_smoothing of the loss"),
      FT_FIELD(EvaluationSummary, top1, "top-1 accuracy in [0,1]"),
      FT_FIELD(EvaluationSummary, top5, "top-k accuracy in [0,1], k = top_k"),
      FT_FIELD(EvaluationSummary, top_k, "k of top5: min(5, classes)"),
  }};
  return group;
}

const FieldGroup<ClassRecord>& evaluation_class_fields() {
  static const FieldGroup<ClassRecord> group{"/evaluation", FieldLayout::columns, {
      FT_FIELD_AS(ClassRecord, "class_names", name, "class name; row k is class k (the model's output k)"),
      FT_FIELD(ClassRecord, precision, "images predicted k that are of class k, in [0,1] (0: none predicted k)"),
      FT_FIELD(ClassRecord, recall, "images of class k predicted k, in [0,1] (0: none of class k)"),
      FT_FIELD(ClassRecord, accuracy,
               "one-vs-rest accuracy of class k: (images - false positives - false negatives) / images"),
      FT_FIELD(ClassRecord, support, "images of class k"),
      FT_FIELD(ClassRecord, predicted, "images predicted k"),
  }};
  return group;
}

const ArrayGroup& evaluation_array_fields() {
  static const ArrayGroup group{"/evaluation", {
      {"confusion", "int64", "[K,K]", "confusion matrix: row = true class, column = predicted class"},
      {"logits", "float32", "[N,K]",
       "only with --logits N: fp32 network outputs before softmax, no test-time augmentation, of the split's "
       "first N images"},
      {"labels", "int64", "[N]", "only with --logits N: the true class of each logits row"},
  }};
  return group;
}

const ArrayField& ArrayGroup::field(const std::string& name) const {
  for (const auto& f : fields)
    if (name == f.name) return f;
  throw_error(__FILE__, __LINE__, cat("no array ", name, " is declared in ", path));
}

namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", c);
      out += escape;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

const char* layout_name(FieldLayout layout) {
  switch (layout) {
    case FieldLayout::attributes: return "attributes";
    case FieldLayout::columns: return "columns";
    case FieldLayout::text_datasets: return "text_dataset";
  }
  return "?";
}

void list(std::ostringstream& out, const ArrayGroup& group, bool& first) {
  for (const auto& f : group.fields) {
    out << (first ? "\n" : ",\n") << "  {\"group\": " << quoted(group.path) << ", \"layout\": \"array\", \"name\": "
        << quoted(f.name) << ", \"stored\": " << quoted(f.stored) << ", \"shape\": " << quoted(f.shape)
        << ", \"meaning\": " << quoted(f.meaning) << "}";
    first = false;
  }
}

template <typename Record>
void list(std::ostringstream& out, const FieldGroup<Record>& group, bool& first) {
  for (const auto& f : group.fields) {
    out << (first ? "\n" : ",\n") << "  {\"group\": " << quoted(group.path)
        << ", \"layout\": " << quoted(layout_name(group.layout)) << ", \"name\": " << quoted(f.name)
        << ", \"stored\": " << quoted(stored_type(f.type(), group.layout)) << ", \"meaning\": " << quoted(f.meaning)
        << "}";
    first = false;
  }
}

}  // namespace

std::string results_fields_json() {
  std::ostringstream out;
  out << "{\"format\": \"fusetrain-results\", \"format_version\": " << kResultsFormatVersion << ", \"fields\": [";
  bool first = true;
  list(out, run_attribute_fields(), first);
  list(out, run_text_fields(), first);
  list(out, provenance_fields(), first);
  list(out, epoch_fields(), first);
  list(out, rank_fields(), first);
  list(out, rank_epoch_fields(), first);
  list(out, segment_fields(), first);
  list(out, utilization_fields(), first);
  list(out, model_fields(), first);
  list(out, summary_fields(), first);
  list(out, evaluation_fields(), first);
  list(out, evaluation_class_fields(), first);
  list(out, evaluation_array_fields(), first);
  out << "\n]}\n";
  return out.str();
}

}  // namespace ft
