// The fixed-choice settings of the configuration as enums, each with its one table of YAML names. The
// table drives parsing, dumping, the reference text and error messages; users compare enum values.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "runtime/error.h"

namespace ft {

template <typename E>
struct ChoiceName {
  E value;
  const char* name;
};

// Specialised below for every choice enum: `static constexpr ChoiceName<E> names[]` in the order the
// reference text lists them.
template <typename E>
struct Choices;

// model.name: the registry (models/registry.cpp) switches over this enum without a default, so a model
// added here and not built there does not compile.
enum class ModelName { simple_cnn, conv_stack, resnet18, resnet9, fast_cifar };
template <>
struct Choices<ModelName> {
  static constexpr ChoiceName<ModelName> names[] = {{ModelName::simple_cnn, "simple_cnn"},
                                                    {ModelName::conv_stack, "conv_stack"},
                                                    {ModelName::resnet18, "resnet18"},
                                                    {ModelName::resnet9, "resnet9"},
                                                    {ModelName::fast_cifar, "fast_cifar"}};
};

// model.conv_relu: ATen's conv2d + relu, or the hand-written fused CUDA conv+bias+ReLU kernel.
enum class ConvReluKernel { aten, fused };
template <>
struct Choices<ConvReluKernel> {
  static constexpr ChoiceName<ConvReluKernel> names[] = {{ConvReluKernel::aten, "aten"},
                                                         {ConvReluKernel::fused, "fused"}};
};

// model.pool_norm_gelu: fast_cifar's max-pool -> BatchNorm -> GELU (and BatchNorm -> GELU) as ATen's three
// operations, as the max-pool kernel (kernels/max_pool) and ATen's other two, or as one fused kernel pair
// (kernels/pool_norm_gelu).
enum class PoolNormGeluKernel { aten, pool, fused };
template <>
struct Choices<PoolNormGeluKernel> {
  static constexpr ChoiceName<PoolNormGeluKernel> names[] = {{PoolNormGeluKernel::aten, "aten"},
                                                             {PoolNormGeluKernel::pool, "pool"},
                                                             {PoolNormGeluKernel::fused, "fused"}};
};

// A layer of a conv_stack model (model.layers[].type).
enum class LayerType { conv, bn, relu, gelu, maxpool, avgpool, dropout, flatten, linear };
template <>
struct Choices<LayerType> {
  static constexpr ChoiceName<LayerType> names[] = {
      {LayerType::conv, "conv"},       {LayerType::bn, "bn"},           {LayerType::relu, "relu"},
      {LayerType::gelu, "gelu"},       {LayerType::maxpool, "maxpool"}, {LayerType::avgpool, "avgpool"},
      {LayerType::dropout, "dropout"}, {LayerType::flatten, "flatten"}, {LayerType::linear, "linear"}};
};

// data.remainder: how ranks equalise their steps per epoch.
enum class Remainder { drop, pad };
template <>
struct Choices<Remainder> {
  static constexpr ChoiceName<Remainder> names[] = {{Remainder::drop, "drop"}, {Remainder::pad, "pad"}};
};

// data.shuffle: each rank its own slice, or one permutation of the whole split.
enum class Shuffle { local, global };
template <>
struct Choices<Shuffle> {
  static constexpr ChoiceName<Shuffle> names[] = {{Shuffle::local, "local"}, {Shuffle::global, "global"}};
};

// elastic.batch: what a run resumed at another number of ranks keeps constant.
enum class ElasticBatch { global, local };
template <>
struct Choices<ElasticBatch> {
  static constexpr ChoiceName<ElasticBatch> names[] = {{ElasticBatch::global, "global"},
                                                       {ElasticBatch::local, "local"}};
};

// elastic.lr_scaling: the learning rate's factor when the global batch changes (elastic.batch: local).
enum class LrScaling { linear, sqrt, none };
template <>
struct Choices<LrScaling> {
  static constexpr ChoiceName<LrScaling> names[] = {{LrScaling::linear, "linear"}, {LrScaling::sqrt, "sqrt"},
                                                    {LrScaling::none, "none"}};
};

enum class OptimizerName { sgd, adam, adamw, rmsprop, muon };
template <>
struct Choices<OptimizerName> {
  static constexpr ChoiceName<OptimizerName> names[] = {{OptimizerName::sgd, "sgd"},
                                                        {OptimizerName::adam, "adam"},
                                                        {OptimizerName::adamw, "adamw"},
                                                        {OptimizerName::rmsprop, "rmsprop"},
                                                        {OptimizerName::muon, "muon"}};
};

// optimizer.implementation: ATen's fused kernels (one launch per parameter group; sgd, adam, adamw) or
// LibTorch's optimizer loop over the tensors; auto = fused on CUDA devices.
enum class OptimizerImplementation { automatic, fused, per_tensor };
template <>
struct Choices<OptimizerImplementation> {
  static constexpr ChoiceName<OptimizerImplementation> names[] = {{OptimizerImplementation::automatic, "auto"},
                                                                  {OptimizerImplementation::fused, "fused"},
                                                                  {OptimizerImplementation::per_tensor, "per_tensor"}};
};

enum class SchedulerName { none, step, cosine, onecycle, linear, linear_decay };
template <>
struct Choices<SchedulerName> {
  static constexpr ChoiceName<SchedulerName> names[] = {{SchedulerName::none, "none"},
                                                        {SchedulerName::step, "step"},
                                                        {SchedulerName::cosine, "cosine"},
                                                        {SchedulerName::onecycle, "onecycle"},
                                                        {SchedulerName::linear, "linear"},
                                                        {SchedulerName::linear_decay, "linear_decay"}};
};

// precision.dtype: the training precision.
enum class Precision { fp32, fp16, bf16, fp64 };
template <>
struct Choices<Precision> {
  static constexpr ChoiceName<Precision> names[] = {{Precision::fp32, "fp32"},
                                                    {Precision::fp16, "fp16"},
                                                    {Precision::bf16, "bf16"},
                                                    {Precision::fp64, "fp64"}};
};

// train.device: "auto" is CUDA when a device is visible, else the CPU.
enum class DeviceChoice { automatic, cpu, cuda };
template <>
struct Choices<DeviceChoice> {
  static constexpr ChoiceName<DeviceChoice> names[] = {{DeviceChoice::automatic, "auto"},
                                                       {DeviceChoice::cpu, "cpu"},
                                                       {DeviceChoice::cuda, "cuda"}};
};

// train.tta: test-time augmentation.
enum class Tta { none, flip, flip_translate };
template <>
struct Choices<Tta> {
  static constexpr ChoiceName<Tta> names[] = {{Tta::none, "none"}, {Tta::flip, "flip"},
                                              {Tta::flip_translate, "flip_translate"}};
};

// distributed.backend: the gradient all-reduce backend.
enum class BackendName { mpi, gloo, nccl };
template <>
struct Choices<BackendName> {
  static constexpr ChoiceName<BackendName> names[] = {{BackendName::mpi, "mpi"},
                                                      {BackendName::gloo, "gloo"},
                                                      {BackendName::nccl, "nccl"}};
};

// distributed.compression: the gradient wire format (none: the gradients' own; fp16: 10-bit mantissa, range to
// 65504; bf16: fp32's range, 7-bit mantissa; powersgd: low-rank factors of each matrix-shaped gradient).
enum class Compression { none, fp16, bf16, powersgd };
template <>
struct Choices<Compression> {
  static constexpr ChoiceName<Compression> names[] = {{Compression::none, "none"},
                                                      {Compression::fp16, "fp16"},
                                                      {Compression::bf16, "bf16"},
                                                      {Compression::powersgd, "powersgd"}};
};

// distributed.allreduce: every rank in one ring, or through one leader per node (mpi only); "auto" times
// both at start where the world spans several nodes and some node runs several ranks, else is flat.
enum class AllreduceAlgorithm { automatic, flat, hierarchical };
template <>
struct Choices<AllreduceAlgorithm> {
  static constexpr ChoiceName<AllreduceAlgorithm> names[] = {{AllreduceAlgorithm::automatic, "auto"},
                                                             {AllreduceAlgorithm::flat, "flat"},
                                                             {AllreduceAlgorithm::hierarchical, "hierarchical"}};
};

// distributed.mpi_algorithm: how the mpi backend all-reduces one bucket: a ring of point-to-point messages
// (every rank sends and receives at once, the bandwidth-optimal pattern), MPI's own MPI_Iallreduce in
// chunks (native), or auto: the ring for buckets of at least MpiBackend::kRingMinBytes, native below.
enum class MpiAlgorithm { automatic, ring, native };
template <>
struct Choices<MpiAlgorithm> {
  static constexpr ChoiceName<MpiAlgorithm> names[] = {
      {MpiAlgorithm::automatic, "auto"}, {MpiAlgorithm::ring, "ring"}, {MpiAlgorithm::native, "native"}};
};

// The YAML name of `value`.
template <typename E>
const char* choice_name(E value) {
  for (const auto& entry : Choices<E>::names)
    if (entry.value == value) return entry.name;
  return "?";
}

// The value named `text`, or nothing when no entry has that name.
template <typename E>
std::optional<E> parse_choice(const std::string& text) {
  for (const auto& entry : Choices<E>::names)
    if (text == entry.name) return entry.value;
  return std::nullopt;
}

// Every name, in table order, joined by `separator`: "sgd|adam|adamw|rmsprop".
template <typename E>
std::string choice_list(const char* separator = "|") {
  std::string list;
  for (const auto& entry : Choices<E>::names) list += (list.empty() ? "" : separator) + std::string(entry.name);
  return list;
}

// The value named `text` given to `option` (e.g. "--backend"); an unknown name throws ft::Error listing
// the valid ones.
template <typename E>
E choice_from(const std::string& option, const std::string& text) {
  const std::optional<E> value = parse_choice<E>(text);
  FT_REQUIRE(value.has_value(), option, ": '", text, "' is not one of ", choice_list<E>());
  return *value;
}

// Messages (ft::cat, streams) print a choice by its YAML name.
template <typename E, typename = decltype(Choices<E>::names)>
std::ostream& operator<<(std::ostream& out, E value) {
  return out << choice_name(value);
}

}  // namespace ft
