// The typed configuration of one run: every YAML key lands in exactly one field here, with its default.
// Sections mirror the YAML file; options.cpp declares keys, help texts and validation for each field, and
// choice settings are enums whose names live in choices.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/choices.h"

namespace ft {

// One layer of a `conv_stack` model, as written in YAML: {type: conv, out: 64, kernel: 3}.
struct LayerSpec {
  LayerType type = LayerType::conv;
  int out = 0;       // conv channels / linear features (0 = number of classes for the last linear)
  int kernel = 3, stride = 1, padding = -1;  // padding -1 = "same" for odd kernels
  double p = 0.5;                            // dropout probability
};

struct ModelConfig {
  ModelName name = ModelName::simple_cnn;
  double dropout = 0.5;             // classifier dropout of simple_cnn
  int width = 64;                   // base channel count of resnet9/resnet18/fast_cifar
  int whiten_bias_epochs = 3;       // fast_cifar: epochs the whitening layer's bias trains (0 = all)
  double norm_bias_lr_scale = 64;   // fast_cifar: learning-rate multiplier of BatchNorm biases
  double head_lr_scale = 1;         // fast_cifar: learning-rate multiplier of the linear head
  double logit_divisor = 9;         // fast_cifar: logits = head output / this (airbench94: 9)
  bool head_unit_std = false;       // fast_cifar: the head's initial weights rescaled to standard deviation 1
  bool whiten_bias_uniform = false; // fast_cifar: whitening bias starts as a default conv's (else zero)
  bool whiten_bias_decay = false;   // fast_cifar: whitening bias rate falls to 0 over whiten_bias_epochs
  PoolNormGeluKernel pool_norm_gelu = PoolNormGeluKernel::aten;
  ConvReluKernel conv_relu = ConvReluKernel::aten;
  std::vector<LayerSpec> layers;    // conv_stack only
  bool sync_batchnorm = false;      // BatchNorm statistics over every rank's images of the step
};

struct AugmentConfig {
  int crop_padding = 0;  // random crop after reflect padding by this many pixels (0 = off)
  bool flip = false;     // random horizontal flip
  bool alternate_flip = false;  // with flip: random in the first epoch, then each image alternates
  int cutout = 0;        // side of a random zeroed square (0 = off)
  double brightness = 0;        // colour jitter: factor uniform in [max(0, 1 - x), 1 + x] (0 = off)
  double contrast = 0;
  double saturation = 0;
  double rotation_degrees = 0;  // random rotation by an angle uniform in [-x, x], bilinear, fill 0 (0 = off)
};

struct DataConfig {
  std::string path;                 // folder of train-*.h5 / test-*.h5 shards
  int batch_size = 32;              // per rank, per micro-batch
  int test_batch_size = 256;
  Remainder remainder = Remainder::drop;
  Shuffle shuffle = Shuffle::local;
  bool normalize = true;            // subtract the shard's mean, divide by its std
  std::int64_t limit_train = 0;     // use only the first N training images (0 = all)
  std::int64_t limit_test = 0;
  AugmentConfig augment;
};

struct OptimizerConfig {
  OptimizerName name = OptimizerName::sgd;
  double lr = 0.01;
  double momentum = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double alpha = 0.99;  // RMSprop smoothing
  double muon_lr = 0.24;        // muon: the conv filters' learning rate (the rest train at lr with SGD)
  double muon_momentum = 0.6;   // muon: the filters' momentum
  int muon_ns_steps = 3;        // muon: Newton-Schulz iterations per update
  OptimizerImplementation implementation = OptimizerImplementation::automatic;
};

struct SchedulerConfig {
  SchedulerName name = SchedulerName::none;
  double warmup_epochs = 0;   // linear warm-up from lr*warmup_start over this many epochs
  double warmup_start = 0.1;
  int step_size = 10;         // step: decay every step_size epochs
  double gamma = 0.1;         // step: decay factor
  double min_lr = 0.0;        // cosine/onecycle/linear floor
  double pct_start = 0.25;    // onecycle/linear: fraction of training spent rising
};

struct PrecisionConfig {
  Precision dtype = Precision::fp32;  // fp64 for equivalence tests
  double initial_scale = 65536.0;  // fp16 dynamic loss scaling
  int growth_interval = 2000;
  bool channels_last = false;
  bool half_weights = false;  // conv/linear weights stored in dtype (fp16/bf16); BatchNorm stays float32
};

struct RegularizationConfig {
  double label_smoothing = 0.0;
  int early_stopping_patience = 0;  // stop after this many epochs without a better test loss (0 = off)
  int overfit_window = 3;           // epochs of rising test loss with falling train loss to flag overfitting
};

struct TrainConfig {
  int epochs = 10;
  int accumulation_steps = 1;  // micro-batches per optimizer step
  std::uint64_t seed = 42;
  DeviceChoice device = DeviceChoice::automatic;
  int threads = 0;              // CPU compute threads per rank (0 = cores / local ranks)
  int eval_every = 1;           // epochs between test evaluations
  int checkpoint_every = 0;     // epochs between checkpoints (0 = only on signal / at the end)
  double checkpoint_every_s = 0;  // seconds between mid-epoch checkpoints, rank 0's clock (0 = off)
  int keep_checkpoints = 2;     // checkpoint files kept: the newest and the ones before it
  int lookahead_every = 0;      // steps between lookahead pulls towards slow weights (0 = off)
  Tta tta = Tta::none;          // test-time augmentation
  bool cudnn = true;            // false: ATen convolutions avoid cuDNN (native CUDA kernels)
  int loss_check_every = 0;     // optimizer steps between reads of the non-finite-loss flag (0 = auto)
  bool cuda_graphs = false;     // capture the step as a CUDA graph after warm-up and replay it
  int warmup_steps = 0;         // steps on throw-away state before the clock starts (0 = none)
  std::int64_t max_steps = 0;   // optimizer steps to train, ending mid-epoch if need be (0 = train.epochs)
};

struct DistributedConfig {
  BackendName backend = BackendName::mpi;
  double stall_timeout_s = 60;      // a collective waiting longer than this aborts the job
  // Fusion bucket size. Small enough that a bucket closes and starts moving while backward goes on:
  // between two 1 Gbit/s nodes a ResNet-18 step waited 30-65 ms for its all-reduce with 4 MiB buckets,
  // 225-265 ms with 25 MiB, whose last bucket closed only at the end of backward.
  double bucket_mib = 4;
  double first_bucket_mib = 1;      // smaller first bucket so communication starts early
  // A larger last bucket is split so that what backward produces last travels alone: at 1 Gbit/s the
  // training thread then waits well under a millisecond for it instead of 6-10 ms for 1 MiB.
  double last_bucket_mib = 0.25;
  bool autotune = false;            // time candidate bucket sizes at start, keep the fastest
  Compression compression = Compression::none;  // on the wire
  // compression powersgd: the rank of each gradient matrix's approximation, and the optimizer steps before it
  // starts (all-reduced uncompressed until then), as PyTorch's PowerSGDState defaults them.
  int powersgd_rank = 1;
  std::int64_t powersgd_start_step = 1000;
  AllreduceAlgorithm allreduce = AllreduceAlgorithm::automatic;  // flat, or through node leaders
  MpiAlgorithm mpi_algorithm = MpiAlgorithm::automatic;          // mpi: ring or MPI_Iallreduce per bucket
  int verify_replicas = 0;          // compare a parameter checksum across ranks every N steps (0 = off)
  // A rank whose compute exceeds the other ranks' median by more than this share in most steps is named as the
  // straggler at the end of the run (results/straggler.h).
  double straggler_share = 0.2;
  bool allow_device_sharing = false;
  std::string timeline;             // Chrome-trace JSON output path ("" = off)
  // The same bits at any number of ranks: each step's global batch is micro_batches micro-batches of
  // data.batch_size images in the global order, each differentiated alone, their gradients summed exactly.
  bool reproducible = false;
  int micro_batches = 4;            // with reproducible: per optimizer step; the number of ranks must divide it
  // The network every transport uses between ranks (an interface name such as eth1), or auto: shared
  // memory and loopback on one node, each transport's own choice on several.
  std::string interface = "auto";
};

// Per-operator profiling of a window of optimizer steps: `wait` steps untouched, `warmup` steps traced and
// discarded, `active` steps recorded (operators, shapes, memory) into a Chrome trace at `trace`.
struct ProfileConfig {
  int wait = 1;
  int warmup = 1;
  int active = 3;
  int repeat = 1;     // cycles of wait, warm-up and active steps; cycle k > 1 writes its own trace (.cycleK)
  std::string trace;  // Chrome-trace JSON output path ("" = off); ranks other than 0 add .rankN
};

// A run resumed at another number of ranks: keep the global batch (per-rank batch and accumulation
// re-split over the new ranks), or keep the per-rank batch and scale the learning rate.
struct ElasticConfig {
  ElasticBatch batch = ElasticBatch::global;
  LrScaling lr_scaling = LrScaling::linear;  // only with batch: local
};

struct OutputConfig {
  std::string dir = "runs";
  std::string name;  // results file stem; "" = <model>-<dataset>-<ranks>r-<timestamp>
  bool save_model = true;  // write the trained network to <dir>/<name>.model at the end
  bool overwrite = false;  // replace an earlier run's files of the same name instead of numbering this one
  // Rank 0 writes a TensorBoard event file, <dir>/<name>.tb/events.out.tfevents.*, as it trains: about 120
  // bytes per step point, and on GPUs its reads of the loss fall on the loss check's default cadence (50 steps).
  bool tensorboard = true;
  int tensorboard_every = 50;    // optimizer steps between per-step points (0 = per-epoch points only)
  double progress_every_s = 30;  // seconds between plain progress lines off a terminal (0 = no progress)
};

struct Config {
  ModelConfig model;
  DataConfig data;
  OptimizerConfig optimizer;
  SchedulerConfig scheduler;
  PrecisionConfig precision;
  RegularizationConfig regularization;
  TrainConfig train;
  DistributedConfig distributed;
  ProfileConfig profile;
  ElasticConfig elastic;
  OutputConfig output;
};

}  // namespace ft
