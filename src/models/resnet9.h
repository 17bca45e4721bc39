// resnet9: the DAWNBench ResNet-9 (David Page): prep conv, three conv+maxpool layers of widths
// 2w, 4w, 8w with residual pairs after the first and third, adaptive max pool, linear scaled by 0.125.
#pragma once

#include <memory>

#include "models/network.h"

namespace ft {

// Every "conv" is conv3x3 + BatchNorm + ReLU (a ConvBN followed by ReLU): prep, layer1, layer1_res1,
// layer1_res2, layer2, layer3, layer3_res1, layer3_res2; then fc (no bias). Needs inputs of at least 8x8.
// Its convolutions all feed batch norm, so model.conv_relu must be "aten".
std::shared_ptr<Network> make_resnet9(const ModelConfig& config, const InputShape& input);

}  // namespace ft
