# PyTorch twins of every fusetrain network (src/models/): the same parameter and buffer names and the same
# forward pass, so an exported fusetrain model loads with load_state_dict(strict=True) and gives its logits.
"""build_model(model_config, channels, height, width, classes) takes the `model:` section of a run's resolved
config (name, dropout, width, conv_relu, layers, ...; missing keys take fusetrain's defaults).
"""
from .conv_stack import ConvStack, LayerSpec
from .fast_cifar import FastCifar
from .registry import MODELS, build_model
from .resnets import ResNet9, ResNet18
from .simple_cnn import SimpleCNN

__all__ = ["MODELS", "build_model", "ConvStack", "LayerSpec", "FastCifar", "ResNet9", "ResNet18", "SimpleCNN"]
