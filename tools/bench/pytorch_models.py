# The peer baselines' view of the PyTorch twins of fusetrain's networks (tools/pytorch_twins/): make_model
# with fusetrain's default options, and a check that the twins' parameter counts are fusetrain's.
"""Usage: python tools/bench/pytorch_models.py   (checks the parameter counts; exits 1 on a mismatch)

The networks themselves (simple_cnn, resnet18, resnet9, fast_cifar, conv_stack) are defined once, in
tools/pytorch_twins, with fusetrain's parameter names and forward passes. LibTorch's and PyTorch's default
initialisations are the same (kaiming-uniform conv/linear, BN weight 1, bias 0), so a twin starts from the
same distribution as fusetrain's network.
"""
from __future__ import annotations

import pathlib
import sys

from torch import nn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from pytorch_twins import build_model  # noqa: E402

# The networks the baselines train (pytorch_baseline.py --model, roofline.py).
MODELS = ("simple_cnn", "resnet18")
# Parameter counts of fusetrain's networks on 32x32x3 images with 10 classes (default options).
EXPECTED_PARAMETERS = {"simple_cnn": 620_362, "resnet18": 11_173_962, "resnet9": 6_573_120,
                       "fast_cifar": 1_972_792}


def make_model(name: str, channels: int = 3, height: int = 32, width: int = 32, classes: int = 10) -> nn.Module:
    """The named network for images of channels x height x width, with fusetrain's default options."""
    return build_model({"name": name}, channels, height, width, classes)


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def check_parameter_counts() -> dict[str, int]:
    """Builds each model for 32x32x3 and 10 classes and asserts fusetrain's parameter counts."""
    counts = {name: parameter_count(make_model(name)) for name in EXPECTED_PARAMETERS}
    for name, count in counts.items():
        assert count == EXPECTED_PARAMETERS[name], \
            f"{name}: {count:,} parameters, fusetrain's has {EXPECTED_PARAMETERS[name]:,}"
    return counts


if __name__ == "__main__":
    for model_name, n in check_parameter_counts().items():
        print(f"{model_name}: {n:,} parameters (fusetrain: {EXPECTED_PARAMETERS[model_name]:,}) ok")
