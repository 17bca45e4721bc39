# PyTorch twin of fusetrain's conv_stack (src/models/conv_stack.cpp): model.layers built in order into
# `layers`, with the same module names, the same shape inference and the same errors for impossible layouts.
from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

LAYER_TYPES = ("conv", "bn", "relu", "gelu", "maxpool", "avgpool", "dropout", "flatten", "linear")


@dataclasses.dataclass
class LayerSpec:
    """One item of model.layers, with fusetrain's defaults (src/config/schema.h)."""
    type: str
    out: int = 0
    kernel: int = 3
    stride: int = 1
    padding: int = -1  # -1: kernel // 2 for conv, 0 for pools
    p: float = 0.5

    @staticmethod
    def parse(item: Any, at: str) -> LayerSpec:
        """A layer written as in the config: a bare type ("relu") or a map ({type: conv, out: 32})."""
        spec = LayerSpec(item) if isinstance(item, str) else None
        if isinstance(item, dict):
            unknown = set(item) - {f.name for f in dataclasses.fields(LayerSpec)}
            if unknown or "type" not in item:
                raise ValueError(f"{at}: a layer needs a 'type' and only the keys type, out, kernel, stride, "
                                 f"padding, p (got {sorted(item)})")
            spec = LayerSpec(**item)
        if spec is None or spec.type not in LAYER_TYPES:
            raise ValueError(f"{at}: unknown layer {item!r} (valid types: {', '.join(LAYER_TYPES)})")
        return spec


class ConvReLU(nn.Conv2d):
    """fusetrain's ConvReLU: a Conv2d's weight and bias, relu(conv2d(x)); model.conv_relu aten and fused
    compute the same function."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(super().forward(x))


def window_output(size: int, kernel: int, stride: int, padding: int) -> int:
    """Output size of a sliding window, or 0 when the window does not fit."""
    return 0 if size + 2 * padding < kernel else (size + 2 * padding - kernel) // stride + 1


class StackBuilder:
    """Appends the layers to an ordered dict while tracking the activation shape (C, H, W, or features)."""

    def __init__(self, channels: int, height: int, width: int, classes: int):
        self.channels, self.height, self.width, self.classes = channels, height, width, classes
        self.flat = False
        self.modules: OrderedDict[str, nn.Module] = OrderedDict()

    def features(self) -> int:
        return self.channels if self.flat else self.channels * self.height * self.width

    def build(self, layers: list[Any]) -> OrderedDict[str, nn.Module]:
        if not layers:
            raise ValueError("model.name conv_stack needs model.layers")
        specs = [LayerSpec.parse(item, f"model.layers[{i}]") for i, item in enumerate(layers)]
        i = 0
        while i < len(specs):
            relu_follows = i + 1 < len(specs) and specs[i + 1].type == "relu"
            consumed = self.add(specs[i], i, i + 1 == len(specs), relu_follows)
            i += 2 if consumed else 1
        if not self.flat:
            self.flatten(f"flatten{len(specs)}")
        if self.features() != self.classes:
            raise ValueError(f"model.layers: the stack ends with {self.features()} features but the data set has "
                             f"{self.classes} classes; end with {{type: linear}} (out 0 = classes)")
        return self.modules

    def add(self, spec: LayerSpec, index: int, last: bool, relu_follows: bool) -> bool:
        """Appends one layer; returns True when it also consumed the relu that follows it."""
        at, name = f"model.layers[{index}]", f"{spec.type}{index}"
        if spec.type == "conv":
            return self.add_conv(spec, at, name, relu_follows)
        if spec.type in ("maxpool", "avgpool"):
            self.add_pool(spec, at, name)
        elif spec.type == "linear":
            self.add_linear(spec, at, name, index, last)
        elif spec.type == "flatten":
            self.flatten(name)
        else:
            self.modules[name] = self.simple_layer(spec, at)
        return False

    def simple_layer(self, spec: LayerSpec, at: str) -> nn.Module:
        if spec.type == "bn":
            return nn.BatchNorm1d(self.features()) if self.flat else nn.BatchNorm2d(self.channels)
        if spec.type == "dropout":
            if not 0 <= spec.p < 1:
                raise ValueError(f"{at}: dropout p must be in [0, 1), not {spec.p}")
            return nn.Dropout(spec.p)
        return nn.ReLU() if spec.type == "relu" else nn.GELU()

    def add_conv(self, spec: LayerSpec, at: str, name: str, relu_follows: bool) -> bool:
        if self.flat:
            raise ValueError(f"{at}: a conv layer cannot follow flatten or linear")
        if spec.out <= 0 or spec.kernel <= 0 or spec.stride <= 0 or spec.padding < -1:
            raise ValueError(f"{at}: conv needs out > 0, kernel > 0, stride > 0 and padding >= -1")
        padding = spec.kernel // 2 if spec.padding < 0 else spec.padding
        self.slide(spec, at, padding)
        conv = ConvReLU if relu_follows else nn.Conv2d
        self.modules[name] = conv(self.channels, spec.out, spec.kernel, stride=spec.stride, padding=padding)
        self.channels = spec.out
        return relu_follows

    def add_pool(self, spec: LayerSpec, at: str, name: str) -> None:
        if self.flat:
            raise ValueError(f"{at}: a {spec.type} layer cannot follow flatten or linear")
        if spec.kernel <= 0 or spec.stride <= 0:
            raise ValueError(f"{at}: {spec.type} needs kernel > 0 and stride > 0")
        padding = max(spec.padding, 0)
        if padding > spec.kernel // 2:
            raise ValueError(f"{at}: {spec.type} padding {padding} exceeds half the kernel ({spec.kernel})")
        self.slide(spec, at, padding)
        pool = nn.MaxPool2d if spec.type == "maxpool" else nn.AvgPool2d
        self.modules[name] = pool(spec.kernel, stride=spec.stride, padding=padding)

    def add_linear(self, spec: LayerSpec, at: str, name: str, index: int, last: bool) -> None:
        if spec.out <= 0 and not last:
            raise ValueError(f"{at}: linear needs out > 0 (only the last layer may omit it to mean classes)")
        if not self.flat:
            self.flatten(f"flatten{index}")
        out = spec.out if spec.out > 0 else self.classes
        self.modules[name] = nn.Linear(self.features(), out)
        self.channels = out

    def slide(self, spec: LayerSpec, at: str, padding: int) -> None:
        """Moves the spatial shape through a kernel x kernel window; errors when it does not fit."""
        h = window_output(self.height, spec.kernel, spec.stride, padding)
        w = window_output(self.width, spec.kernel, spec.stride, padding)
        if h < 1 or w < 1:
            raise ValueError(f"{at}: {spec.type} with kernel {spec.kernel}, stride {spec.stride}, padding {padding} "
                             f"does not fit its {self.height}x{self.width} input ({self.channels} channels)")
        self.height, self.width = h, w

    def flatten(self, name: str) -> None:
        if not self.flat:
            self.channels, self.height, self.width, self.flat = self.features(), 1, 1, True
        self.modules[name] = nn.Flatten()


class ConvStack(nn.Module):
    """model.layers as one nn.Sequential named `layers` (modules "conv0", "relu1", ...; a conv directly
    followed by relu is one ConvReLU under the conv's name; flatten inserted before the first linear)."""

    def __init__(self, layers: list[Any], channels: int, height: int, width: int, classes: int):
        super().__init__()
        self.layers = nn.Sequential(StackBuilder(channels, height, width, classes).build(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)
