// Everything one run leaves behind, as plain structs: the per-epoch table, per-rank statistics,
// provenance and summary. results_file.cpp maps it to and from the HDF5 results file.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ft {

struct EpochRecord {
  int epoch = 0;  // 1-based
  double train_loss = 0, train_acc = 0, test_loss = 0, test_acc = 0;  // accuracies in [0,1]
  double lr = 0, epoch_time_s = 0, images_per_s = 0;
  bool evaluated = false;
  std::string weights_digest, optimizer_digest;  // SHA-256 of the state after the epoch (train/state_digest.h)
};

constexpr std::size_t kRankPhases = 6;  // data, forward, backward, comm_wait, optimizer, eval

struct RankRecord {
  std::string hostname, device;
  int local_rank = 0;                  // rank among the ranks of its node (picks the node's GPU)
  std::array<double, kRankPhases> phase_s{};
  std::string phase_clock;             // what timed phase_s: host (steady clock) or cuda_events (stream)
  std::int64_t peak_memory_bytes = 0;  // GPU: CUDA peak allocated; CPU: peak resident set of the process
  std::int64_t peak_allocated_bytes = 0;  // peak bytes of live tensors in LibTorch's allocator of the device
  std::int64_t train_images = 0;       // images in this rank's slice
  std::int64_t allreduce_bytes = 0;
  double allreduce_s = 0;
  double comm_hidden_fraction = 0;     // share of allreduce_s that ran behind backward, not waited for
  double slow_step_share = 0;          // share of steps its compute exceeded the others' median by the threshold
  double compute_excess = 0;           // median over steps of its compute over the others' median, minus 1
  double train_loss = 0, train_acc = 0;  // final epoch, on this rank's slice only (before the all-reduce)
  std::int64_t test_images = 0;          // images in this rank's test slice
  double test_loss = 0, test_acc = 0;    // final evaluation, on this rank's test slice only
};

// One rank's own figures of one evaluated epoch: train metrics of its own batches, test metrics of its own
// slice of the test split (what each process of a DistributedSampler run reports).
struct RankEpochRecord {
  int rank = 0, epoch = 0;  // epoch 1-based
  double train_loss = 0, train_acc = 0, test_loss = 0, test_acc = 0;  // accuracies in [0,1]
};

// One stretch of a run between a start or resume and its stop or end: where it ran, where in the run it
// began, and the batch it trained with (a run resumed on another number of ranks has several).
struct SegmentRecord {
  int segment = 1;                    // 1-based, in run order
  int world_size = 1, node_count = 1;
  std::string backend, device, started_at;  // started_at: UTC, ISO 8601
  int start_epoch = 1;                // 1-based
  std::int64_t start_step = 0;        // optimizer steps of start_epoch already done before this segment
  std::int64_t start_sample = 0;      // images of that epoch's global order already trained on
  int per_rank_batch = 0, accumulation = 1;
  std::int64_t global_batch = 0;      // images per optimizer step over all ranks
  double lr_factor = 1;               // elastic.batch: local scales optimizer.lr by this
  double wall_time_s = 0;             // seconds from this segment's start to its last checkpoint or end
};

struct Provenance {
  std::string program_version, git_commit, torch_version, cuda_version, mpi_version;
  std::string command_line, started_at, backend;
  std::string allreduce;  // flat | hierarchical: the algorithm the backend ran
  int world_size = 1, node_count = 1;
};

struct RunSummary {
  double wall_time_s = 0, train_time_s = 0;
  double best_test_acc = 0, final_test_acc = 0, final_test_loss = 0;
  int best_epoch = 0, epochs_run = 0;
  double images_per_s = 0;
  std::int64_t peak_memory_bytes = 0;  // max over ranks
  bool overfit = false;
  int overfit_epoch = 0;               // first epoch of the rising-test-loss window
  bool stopped_early = false;
  std::int64_t optimizer_steps = 0, skipped_steps = 0;
  double bucket_mib = 0, first_bucket_mib = 0, last_bucket_mib = 0;  // fusion buckets in use
  bool buckets_autotuned = false;
  std::int64_t graph_captures = 0, graph_replays = 0;  // train.cuda_graphs: the last segment's, on rank 0
  double train_steps_s = 0;         // the epochs' training steps: the sum of every epoch's epoch_time_s
  std::int64_t warmup_steps = 0;    // train.warmup_steps run before the clock started, their state restored
  double warmup_s = 0;              // their seconds, restore included, outside every other clock
  double cold_s = 0;                // process start to the end of the last epoch's steps (max over ranks)
  int straggler_rank = -1;             // the rank that held the others back (-1: none; results/straggler.h)
  double straggler_slow_share = 0, straggler_excess = 0, straggler_wait_share = 0;
  std::int64_t straggler_windows = 0;  // steps (windows of steps on GPUs) the verdict compared
};

struct UtilizationSample {
  double time_s = 0;
  int rank = 0;
  double gpu_percent = 0, memory_percent = 0;
};

// One row of a model summary: a layer (or a parameter-free operation) in forward order.
struct ModelLayer {
  std::string name;          // module name, e.g. "conv1", or the operation, e.g. "max_pool2d"
  std::string output_shape;  // for one input image, e.g. "32x16x16"
  std::int64_t parameters = 0;
};

struct RunRecord {
  std::string name, model, dataset, precision;
  int batch_size = 0;
  std::string config_yaml;
  std::string model_file;  // the trained network's file, "" when output.save_model is off
  Provenance provenance;
  std::vector<EpochRecord> epochs;
  std::vector<RankRecord> ranks;
  std::vector<RankEpochRecord> rank_epochs;  // every rank's own figures per evaluated epoch, epoch by epoch
  std::vector<SegmentRecord> segments;       // one per start or resume, in order
  std::vector<UtilizationSample> utilization;
  std::vector<ModelLayer> layers;  // the model summary (/model)
  RunSummary summary;
};

}  // namespace ft
