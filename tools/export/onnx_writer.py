# Writes a loaded fusetrain export (its PyTorch twin) as ONNX with a dynamic batch dimension and the export's
# metadata as ONNX metadata properties, atomically; and runs such a file with ONNX Runtime.
from __future__ import annotations

import contextlib
import json
import logging
import os
import pathlib
import sys
import warnings
from typing import Any, Callable, Iterator

import numpy as np
import onnx
import torch
from torch import nn

INPUT, OUTPUT = "images", "logits"
# The batch of the example input: 2, because an exporter may specialise a dimension of size 1 to a constant.
EXAMPLE_BATCH = 2


def metadata_text(metadata: dict[str, Any]) -> dict[str, str]:
    """The export's metadata as strings, as in the safetensors header (JSON lists, "true"/"false")."""
    def text(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        return json.dumps(value) if isinstance(value, (list, tuple)) else str(value)
    return {key: text(value) for key, value in metadata.items()}


def export_graph(module: nn.Module, example: torch.Tensor, path: pathlib.Path) -> None:
    # torch.export (dynamo=True, with onnxscript) is the exporter PyTorch maintains; the TorchScript one
    # (dynamo=False) is deprecated ("will be removed"). Both export every twin, and ONNX Runtime matches the
    # twins' logits to ~5e-7 relative with either. The TorchScript exporter stays as the fallback for a
    # machine without onnxscript or a network torch.export cannot trace, since the twins are static graphs
    # without data-dependent control flow, which is what that tracer handles.
    try:
        import onnxscript  # noqa: F401  (the dynamo exporter's dependency)
        with quiet_exporter():
            torch.onnx.export(module, (example,), str(path), dynamo=True, external_data=False, verbose=False,
                              input_names=[INPUT], output_names=[OUTPUT],
                              dynamic_shapes=({0: torch.export.Dim("batch")},))
        return
    except Exception as error:  # any failure of the dynamo path: fall back, saying why
        print(f"onnx: torch.export-based export failed ({type(error).__name__}: {str(error)[:200]}); "
              "using the TorchScript exporter", file=sys.stderr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(module, (example,), str(path), dynamo=False, input_names=[INPUT], output_names=[OUTPUT],
                          dynamic_axes={INPUT: {0: "batch"}, OUTPUT: {0: "batch"}})


@contextlib.contextmanager
def quiet_exporter() -> Iterator[None]:
    """Silences the dynamo exporter's notes on optional packages it does not need (torchvision ops) and
    PyTorch's internal deprecation warnings, which say nothing about the exported network."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            yield
    finally:
        logger.setLevel(level)


def write_onnx(module: nn.Module, metadata: dict[str, Any], path: str | pathlib.Path) -> None:
    """`module` (eval mode) as an ONNX file at `path`, which appears only once complete."""
    path = pathlib.Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    example = torch.zeros(EXAMPLE_BATCH, *metadata["input_shape"])
    try:
        export_graph(module.eval(), example, temporary)
        model = onnx.load(str(temporary))
        for key, value in metadata_text(metadata).items():
            model.metadata_props.add(key=key, value=value)
        onnx.checker.check_model(model)
        onnx.save(model, str(temporary))
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def onnx_predictor(path: str | pathlib.Path) -> Callable[[torch.Tensor], np.ndarray]:
    """ONNX Runtime (CPU) running the file: preprocessed float32 [N, C, H, W] images -> logits [N, K]."""
    import onnxruntime
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return lambda images: session.run([OUTPUT], {INPUT: images.numpy()})[0]
