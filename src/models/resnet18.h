// resnet18: the CIFAR variant of ResNet-18 (3x3 stem with stride 1, no stem max-pool), 4 stages of
// 2 BasicBlocks with widths w, 2w, 4w, 8w (w = model.width), global average pool and a linear classifier.
#pragma once

#include <memory>

#include "models/network.h"

namespace ft {

// Parameter names follow torchvision: conv1, bn1, layer1..layer4.{0,1}.{conv1,bn1,conv2,bn2,shortcut}, fc.
// Its convolutions all feed batch norm, so model.conv_relu must be "aten".
std::shared_ptr<Network> make_resnet18(const ModelConfig& config, const InputShape& input);

}  // namespace ft
