# build_model: maps a fusetrain model config (the `model:` section of a run's resolved config) to the
# PyTorch twin of the network fusetrain builds from it (src/models/registry.cpp), with the same defaults.
from __future__ import annotations

from typing import Any

from torch import nn

from .conv_stack import ConvStack
from .fast_cifar import FastCifar
from .resnets import ResNet9, ResNet18
from .simple_cnn import SimpleCNN

MODELS = ("simple_cnn", "conv_stack", "resnet18", "resnet9", "fast_cifar")
# ModelConfig's defaults (src/config/schema.h).
DEFAULTS = {"dropout": 0.5, "width": 64, "whiten_bias_epochs": 3, "norm_bias_lr_scale": 64.0,
            "conv_relu": "aten", "layers": []}
CONV_RELU = ("aten", "fused")
# Networks with batch norm between every conv and ReLU, which fusetrain builds only with conv_relu aten.
ATEN_ONLY = ("resnet18", "resnet9", "fast_cifar")


def resolved(model_config: dict[str, Any]) -> dict[str, Any]:
    """The config with fusetrain's defaults filled in; errors name the key as fusetrain does."""
    config = {**DEFAULTS, **model_config}
    if config.get("name") not in MODELS:
        raise ValueError(f"model.name: unknown network {config.get('name')!r} (valid: {', '.join(MODELS)})")
    if config["conv_relu"] not in CONV_RELU:
        raise ValueError(f"model.conv_relu: {config['conv_relu']!r} is not one of {'|'.join(CONV_RELU)}")
    if config["name"] in ATEN_ONLY and config["conv_relu"] != "aten":
        raise ValueError(f"model.conv_relu 'fused' needs a conv followed directly by ReLU; {config['name']} "
                         "has batch norm in between, so use 'aten'")
    return config


def build_model(model_config: dict[str, Any], channels: int, height: int, width: int, classes: int) -> nn.Module:
    """The twin of fusetrain's network for model_config on channels x height x width images and `classes`
    outputs, in training mode with PyTorch's default initialisation (fusetrain's too)."""
    if min(channels, height, width, classes) < 1:
        raise ValueError(f"model.name {model_config.get('name')}: the data set's shape {channels}x{height}x{width} "
                         f"with {classes} classes is not a valid input")
    config = resolved(model_config)
    name = config["name"]
    if name == "simple_cnn":
        return SimpleCNN(channels, height, width, classes, float(config["dropout"]))
    if name == "conv_stack":
        return ConvStack(config["layers"], channels, height, width, classes)
    if name == "resnet18":
        return ResNet18(channels, classes, int(config["width"]))
    if name == "resnet9":
        return ResNet9(channels, height, width, classes, int(config["width"]))
    return FastCifar(channels, height, width, classes, int(config["width"]))
