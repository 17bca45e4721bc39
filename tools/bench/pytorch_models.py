# PyTorch twins of fusetrain's simple_cnn and resnet18 (src/models/), layer for layer and with the same
# parameter names, so the peer baselines train exactly the network fusetrain trains.
"""Usage: python tools/bench/pytorch_models.py   (checks the parameter counts; exits 1 on a mismatch)

simple_cnn  three conv3x3(pad 1)+ReLU+maxpool2 stages (32, 64, 128 channels), fc1 256 + ReLU + dropout,
            fc2 to the classes (src/models/simple_cnn.cpp).
resnet18    CIFAR ResNet-18: conv3x3 stem + BN + ReLU, four stages of two BasicBlocks (width, 2w, 4w, 8w;
            stride 2 from the second stage on, 1x1 conv+BN shortcut where the shape changes), global average
            pool, fc (src/models/resnet18.cpp, conv_bn.cpp). Convolutions before a BN have no bias.

LibTorch's and PyTorch's default initialisations are the same (kaiming-uniform conv/linear, BN weight 1,
bias 0), so a twin starts from the same distribution as fusetrain's network.
"""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F

# Parameter counts of fusetrain's networks on 32x32x3 images with 10 classes (default dropout and width).
EXPECTED_PARAMETERS = {"simple_cnn": 620_362, "resnet18": 11_173_962}


class SimpleCNN(nn.Module):
    def __init__(self, channels: int = 3, height: int = 32, width: int = 32, classes: int = 10,
                 dropout: float = 0.5):
        super().__init__()
        if height < 8 or width < 8:
            raise ValueError(f"simple_cnn needs images of at least 8x8, not {height}x{width}")
        self.conv1 = nn.Conv2d(channels, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.conv3 = nn.Conv2d(64, 128, 3, padding=1)
        self.fc1 = nn.Linear(128 * (height // 8) * (width // 8), 256)
        self.dropout = nn.Dropout(dropout)
        self.fc2 = nn.Linear(256, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for conv in (self.conv1, self.conv2, self.conv3):
            x = F.max_pool2d(F.relu(conv(x)), 2)
        return self.fc2(self.dropout(F.relu(self.fc1(x.flatten(1)))))


class ConvBN(nn.Module):
    """bn(conv(x)) without activation: the projection shortcut of a BasicBlock."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int, stride: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, stride=stride, padding=kernel // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.conv(x))


def conv3x3(in_channels: int, out_channels: int, stride: int) -> nn.Conv2d:
    return nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
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
    def __init__(self, channels: int = 3, classes: int = 10, width: int = 64):
        super().__init__()
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


MODELS = ("simple_cnn", "resnet18")


def make_model(name: str, channels: int = 3, height: int = 32, width: int = 32, classes: int = 10) -> nn.Module:
    """The named network for images of channels x height x width, with fusetrain's default options."""
    if name == "simple_cnn":
        return SimpleCNN(channels, height, width, classes)
    if name == "resnet18":
        return ResNet18(channels, classes)
    raise ValueError(f"unknown model '{name}' (valid: {', '.join(MODELS)})")


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def check_parameter_counts() -> dict[str, int]:
    """Builds each model for 32x32x3 and 10 classes and asserts fusetrain's parameter counts."""
    counts = {name: parameter_count(make_model(name)) for name in MODELS}
    for name, count in counts.items():
        assert count == EXPECTED_PARAMETERS[name], \
            f"{name}: {count:,} parameters, fusetrain's has {EXPECTED_PARAMETERS[name]:,}"
    return counts


if __name__ == "__main__":
    for model_name, n in check_parameter_counts().items():
        print(f"{model_name}: {n:,} parameters (fusetrain: {EXPECTED_PARAMETERS[model_name]:,}) ok")
