# PyTorch twins of fusetrain's resnet18 and resnet9 (src/models/resnet18.cpp, resnet9.cpp, conv_bn.cpp):
# the same module tree, hence the same parameter and buffer names, and the same forward pass.
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class ConvBN(nn.Module):
    """bn(conv(x)), no activation; the conv (padding kernel // 2) has no bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int, stride: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, stride=stride, padding=kernel // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.conv(x))


def conv3x3(in_channels: int, out_channels: int, stride: int) -> nn.Conv2d:
    return nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    """Two conv3x3+BN, a 1x1 ConvBN shortcut where the shape changes, ReLU after the sum."""

    def __init__(self, in_channels: int, out_channels: int, stride: int):
        super().__init__()
        self.conv1 = conv3x3(in_channels, out_channels, stride)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = conv3x3(out_channels, out_channels, 1)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.shortcut = ConvBN(in_channels, out_channels, 1, stride) if stride != 1 or in_channels != out_channels \
            else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.bn1(self.conv1(x)))
        identity = self.shortcut(x) if self.shortcut is not None else x
        return F.relu(self.bn2(self.conv2(h)) + identity)


class ResNet18(nn.Module):
    """CIFAR ResNet-18: conv3x3 stem + BN + ReLU, four stages of two BasicBlocks (w, 2w, 4w, 8w; stride 2
    from the second stage on), global average pool, fc."""

    def __init__(self, channels: int = 3, classes: int = 10, width: int = 64):
        super().__init__()
        if width < 1:
            raise ValueError(f"model.width must be at least 1, not {width}")
        self.conv1 = conv3x3(channels, width, 1)
        self.bn1 = nn.BatchNorm2d(width)
        in_channels = width
        for stage in range(4):
            out_channels = width << stage
            blocks = nn.Sequential(BasicBlock(in_channels, out_channels, 1 if stage == 0 else 2),
                                   BasicBlock(out_channels, out_channels, 1))
            self.add_module(f"layer{stage + 1}", blocks)
            in_channels = out_channels
        self.fc = nn.Linear(in_channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.layer4(self.layer3(self.layer2(self.layer1(h))))
        return self.fc(F.adaptive_avg_pool2d(h, 1).flatten(1))


RESNET9_LOGIT_SCALE = 0.125


class ResNet9(nn.Module):
    """Page's DAWNBench ResNet-9: eight ConvBN+ReLU units, three 2x2 max-pools, residual pairs x + f(x)
    (no ReLU after the sum), global max pool, bias-free fc, logits * 0.125."""

    def __init__(self, channels: int = 3, height: int = 32, width: int = 32, classes: int = 10,
                 base_width: int = 64):
        super().__init__()
        if base_width < 1:
            raise ValueError(f"model.width must be at least 1, not {base_width}")
        if height < 8 or width < 8:
            raise ValueError(f"model.name resnet9 needs images of at least 8x8, not {height}x{width}")
        w = base_width
        self.prep = ConvBN(channels, w, 3, 1)
        self.layer1 = ConvBN(w, 2 * w, 3, 1)
        self.layer1_res1 = ConvBN(2 * w, 2 * w, 3, 1)
        self.layer1_res2 = ConvBN(2 * w, 2 * w, 3, 1)
        self.layer2 = ConvBN(2 * w, 4 * w, 3, 1)
        self.layer3 = ConvBN(4 * w, 8 * w, 3, 1)
        self.layer3_res1 = ConvBN(8 * w, 8 * w, 3, 1)
        self.layer3_res2 = ConvBN(8 * w, 8 * w, 3, 1)
        self.fc = nn.Linear(8 * w, classes, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.prep(x))
        h = F.max_pool2d(F.relu(self.layer1(h)), 2)
        h = h + F.relu(self.layer1_res2(F.relu(self.layer1_res1(h))))
        h = F.max_pool2d(F.relu(self.layer2(h)), 2)
        h = F.max_pool2d(F.relu(self.layer3(h)), 2)
        h = h + F.relu(self.layer3_res2(F.relu(self.layer3_res1(h))))
        return self.fc(h.amax((2, 3))) * RESNET9_LOGIT_SCALE
