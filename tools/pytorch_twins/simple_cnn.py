# PyTorch twin of fusetrain's simple_cnn (src/models/simple_cnn.cpp): same parameter names, same forward.
# Three conv3x3+ReLU+maxpool2 stages (32, 64, 128 channels), fc1 256 + ReLU + dropout, fc2 to the classes.
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class SimpleCNN(nn.Module):
    """conv1..conv3 are fusetrain's ConvReLU blocks: a Conv2d's weight and bias, relu(conv2d(x)) whether
    model.conv_relu is aten or fused (the fused kernel computes the same function)."""

    def __init__(self, channels: int = 3, height: int = 32, width: int = 32, classes: int = 10,
                 dropout: float = 0.5):
        super().__init__()
        if height < 8 or width < 8:
            raise ValueError(f"model.name simple_cnn needs images of at least 8x8, not {height}x{width}")
        if not 0 <= dropout < 1:
            raise ValueError(f"model.dropout must be in [0, 1), not {dropout}")
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
