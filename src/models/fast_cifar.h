// fast_cifar: an airbench94-class network (Keller Jordan's CIFAR-10 speedrun): a 2x2 patch-whitening conv fitted
// to the data, three conv+pool+BatchNorm+GELU groups of widths w, 4w, 4w, global max pool, linear scaled down (1/9).
#pragma once

#include <memory>

#include "models/network.h"

namespace ft {

// Parameters: whiten.{weight,bias}; group1..group3.{conv1.weight, norm1.{weight,bias}, conv2.weight,
// norm2.{weight,bias}}; fc.weight (no bias). whiten.weight and every norm weight are frozen
// (requires_grad false); initialize_from_data sets whiten.weight to the whitening filters of the images'
// 2x2 patches. parameter_rules: each norm bias trains at model.norm_bias_lr_scale times the learning rate,
// fc.weight at model.head_lr_scale, and whiten.bias stops training after model.whiten_bias_epochs (its rate
// falling to zero over them with model.whiten_bias_decay). Logits are fc's output / model.logit_divisor; each
// pool -> norm -> GELU runs fused or as ATen's as model.pool_norm_gelu says. Needs inputs of at least 16x16,
// and model.conv_relu "aten" (it has no conv followed directly by ReLU).
std::shared_ptr<Network> make_fast_cifar(const ModelConfig& config, const InputShape& input);

}  // namespace ft
