# PyTorch twin of fusetrain's fast_cifar (src/models/fast_cifar.cpp), an airbench94-class network: a 2x2
# patch-whitening conv fitted to the data, three conv groups, global max pool, bias-free fc scaled by 1/9.
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

WHITEN_KERNEL = 2
WHITEN_EPS = 5e-4  # added to each eigenvalue before the 1/sqrt, as in airbench
# airbench's batch-norm momentum 0.6 is the fraction of the running statistics kept; PyTorch's (and
# LibTorch's) momentum is the fraction taken from the batch.
NORM_MOMENTUM = 1 - 0.6
NORM_EPS = 1e-12
LOGIT_SCALE = 1 / 9
WHITEN_CHUNK = 500  # images per chunk when accumulating the patch second moment


def norm(channels: int) -> nn.BatchNorm2d:
    """BatchNorm with a frozen scale of 1 and a trainable shift starting at 0."""
    bn = nn.BatchNorm2d(channels, eps=NORM_EPS, momentum=NORM_MOMENTUM)
    bn.weight.requires_grad_(False)
    return bn


def conv3x3(in_channels: int, out_channels: int) -> nn.Conv2d:
    """A bias-free conv3x3 whose first min(out, in) filters start as identities (dirac), the rest default."""
    conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
    with torch.no_grad():
        nn.init.dirac_(conv.weight[:min(out_channels, in_channels)])
    return conv


class ConvGroup(nn.Module):
    """conv3x3 -> max-pool 2 -> norm -> GELU -> conv3x3 -> norm -> GELU."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv1 = conv3x3(in_channels, out_channels)
        self.norm1 = norm(out_channels)
        self.conv2 = conv3x3(out_channels, out_channels)
        self.norm2 = norm(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.norm1(F.max_pool2d(self.conv1(x), 2)))
        return F.gelu(self.norm2(self.conv2(h)))


class FastCifar(nn.Module):
    """whiten (C -> 8C, 2x2, weight frozen, bias from 0) + GELU, groups of widths (w, 4w, 4w), amax over H, W,
    fc (no bias) * 1/9. Parameter names: whiten.*, group1..group3.{conv1, norm1, conv2, norm2}.*, fc.weight."""

    def __init__(self, channels: int = 3, height: int = 32, width: int = 32, classes: int = 10,
                 base_width: int = 64):
        super().__init__()
        if base_width < 1:
            raise ValueError(f"model.width must be at least 1, not {base_width}")
        if height < 16 or width < 16:
            raise ValueError("model.name fast_cifar needs images of at least 16x16 (a 2x2 whitening conv, then "
                             f"three 2x2 max-pools), not {channels}x{height}x{width}")
        patch = channels * WHITEN_KERNEL * WHITEN_KERNEL
        self.whiten = nn.Conv2d(channels, 2 * patch, WHITEN_KERNEL, bias=True)
        nn.init.zeros_(self.whiten.bias)
        self.whiten.weight.requires_grad_(False)
        self.group1 = ConvGroup(2 * patch, base_width)
        self.group2 = ConvGroup(base_width, 4 * base_width)
        self.group3 = ConvGroup(4 * base_width, 4 * base_width)
        self.fc = nn.Linear(4 * base_width, classes, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.whiten(x))
        h = self.group3(self.group2(self.group1(h)))
        return self.fc(h.amax((2, 3))) * LOGIT_SCALE

    @torch.no_grad()
    def fit_whitening(self, images: torch.Tensor) -> None:
        """fusetrain's initialize_from_data: with S the uncentred second moment of the 2x2 patches of `images`
        (normalised float NCHW) and S = V diag(l) V^T, the filters are the rows of diag(1 / sqrt(l + eps)) V^T,
        largest eigenvalue first, followed by their negatives; the bias restarts at 0."""
        dim = self.whiten.weight.shape[1] * WHITEN_KERNEL * WHITEN_KERNEL
        moment = torch.zeros(dim, dim, dtype=torch.float64, device=images.device)
        count = 0
        for chunk in images.split(WHITEN_CHUNK):
            patches = F.unfold(chunk.double(), WHITEN_KERNEL).transpose(1, 2).reshape(-1, dim)
            moment += patches.T @ patches
            count += len(patches)
        eigenvalues, eigenvectors = torch.linalg.eigh((moment / count).cpu())  # ascending
        eigenvalues, eigenvectors = eigenvalues.flip(0), eigenvectors.flip(1)
        filters = eigenvectors.T / torch.sqrt(eigenvalues + WHITEN_EPS)[:, None]
        filters = filters.reshape(self.whiten.weight[:dim].shape).to(self.whiten.weight)
        self.whiten.weight.copy_(torch.cat([filters, -filters]))
        self.whiten.bias.zero_()
