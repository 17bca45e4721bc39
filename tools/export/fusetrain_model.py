# Loads a `fusetrain export` file (safetensors or torch) into the PyTorch twin of its network, and feeds it
# images the way fusetrain does; the command line also writes ONNX and checks against `fusetrain evaluate`.
"""Usage: python tools/export/fusetrain_model.py EXPORT [--onnx OUT.onnx] [--check EVAL.h5 [--data DIR]]

EXPORT   a file written by `fusetrain export --format safetensors|torch` (told apart by its content). The
         network is rebuilt from the export's metadata (model config, input shape, classes) with the PyTorch
         twins of tools/pytorch_twins, its tensors loaded with load_state_dict(strict=True), in eval mode.
--onnx   writes the network as ONNX (input "images" float32 [batch, C, H, W] normalised as preprocess()
         does, output "logits" [batch, classes]; the batch dimension is dynamic), with the export's
         metadata as ONNX metadata properties.
--check  compares with `fusetrain evaluate --logits N --out EVAL.h5`: the twin's logits on the first N
         images of the evaluated split (read from the shards in --data, default the folder evaluate
         read) equal /evaluation/logits within --rtol (max|a - b| / max|b|, default 1e-5), its top-1
         accuracy over the evaluated images equals /evaluation/top1 exactly (when evaluate ran without
         test-time augmentation), and with --onnx the ONNX Runtime logits equal the twin's within
         --onnx-rtol (default 1e-4). Exits 1 on a mismatch.

From other scripts (sys.path including tools/export):
    from fusetrain_model import load_export, preprocess
    model, metadata = load_export("model.safetensors")
    logits = model(preprocess(uint8_images_nhwc, metadata))
metadata holds native types: format, format_version (int), model, config (YAML text), input_shape
([C, H, W]), classes (int), class_names, mean, std (lists), normalize (bool), dataset.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import struct
import sys
from typing import Any

import numpy as np
import torch
import yaml
from torch import nn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from pytorch_twins import build_model  # noqa: E402

FORMAT = "fusetrain-export"
FORMAT_VERSION = 1
# Metadata keys by type; safetensors stores every value as a string (JSON for lists, "true"/"false").
JSON_KEYS = ("input_shape", "class_names", "mean", "std")
INT_KEYS = ("format_version", "classes")
TEXT_KEYS = ("format", "model", "config", "dataset")
ZIP_MAGIC = b"PK\x03\x04"  # torch.save writes a zip archive


class ExportError(ValueError):
    """An export that cannot be read or does not match the network its metadata describes."""


def export_kind(path: pathlib.Path) -> str:
    """"torch" or "safetensors", from the file's first bytes (a zip archive, or a length-prefixed JSON header)."""
    with open(path, "rb") as f:
        head = f.read(9)
    size = path.stat().st_size
    if head.startswith(ZIP_MAGIC):
        return "torch"
    if len(head) == 9 and head[8:9] == b"{" and struct.unpack("<Q", head[:8])[0] <= size - 8:
        return "safetensors"
    raise ExportError(f"{path}: neither a safetensors file nor a torch.save archive (not a fusetrain export)")


def read_safetensors(path: pathlib.Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    from safetensors import safe_open
    with safe_open(str(path), framework="pt") as f:
        text = f.metadata() or {}
        state = {name: f.get_tensor(name) for name in f.keys()}
    metadata: dict[str, Any] = dict(text)
    try:
        for key in JSON_KEYS:
            if key in text:
                metadata[key] = json.loads(text[key])
        for key in INT_KEYS:
            if key in text:
                metadata[key] = int(text[key])
    except ValueError as error:
        raise ExportError(f"{path}: metadata value of '{key}' is malformed ({error})") from None
    if "normalize" in text:
        if text["normalize"] not in ("true", "false"):
            raise ExportError(f"{path}: metadata 'normalize' is {text['normalize']!r}, not true or false")
        metadata["normalize"] = text["normalize"] == "true"
    return state, metadata


def read_torch(path: pathlib.Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    content = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(content, dict) or not isinstance(content.get("state_dict"), dict) \
            or not isinstance(content.get("metadata"), dict):
        raise ExportError(f"{path}: a torch file without the 'state_dict' and 'metadata' of a fusetrain export")
    return content["state_dict"], content["metadata"]


def check_metadata(path: pathlib.Path, metadata: dict[str, Any]) -> None:
    missing = [k for k in (*JSON_KEYS, *INT_KEYS, *TEXT_KEYS, "normalize") if k not in metadata]
    if metadata.get("format") != FORMAT:
        raise ExportError(f"{path}: metadata format is {metadata.get('format')!r}, not {FORMAT!r}")
    if metadata.get("format_version") != FORMAT_VERSION:
        raise ExportError(f"{path}: export format_version {metadata.get('format_version')!r}; this script reads "
                          f"version {FORMAT_VERSION}")
    if missing:
        raise ExportError(f"{path}: metadata lacks {', '.join(missing)}")
    shape = metadata["input_shape"]
    if len(shape) != 3 or len(metadata["mean"]) != shape[0] or len(metadata["std"]) != shape[0]:
        raise ExportError(f"{path}: input_shape {metadata['input_shape']} disagrees with mean/std "
                          f"{metadata['mean']}/{metadata['std']} (one value per channel)")


def read_export(path: str | pathlib.Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The export's tensors by name and its metadata (native types), whichever format it is in."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise ExportError(f"{path}: no such file")
    state, metadata = (read_torch if export_kind(path) == "torch" else read_safetensors)(path)
    check_metadata(path, metadata)
    return state, metadata


def check_state(path: pathlib.Path, module: nn.Module, state: dict[str, torch.Tensor]) -> None:
    """Names the tensors that differ between the export and the twin, before load_state_dict would."""
    expected = module.state_dict()
    problems = [f"missing {name} {list(t.shape)}" for name, t in expected.items() if name not in state]
    problems += [f"unexpected {name} {list(t.shape)}" for name, t in state.items() if name not in expected]
    problems += [f"{name} is {list(t.shape)}, the network's is {list(expected[name].shape)}"
                 for name, t in state.items() if name in expected and t.shape != expected[name].shape]
    if problems:
        shown = "; ".join(problems[:8]) + (f"; ... {len(problems) - 8} more" if len(problems) > 8 else "")
        raise ExportError(f"{path}: the tensors do not fit the {module.__class__.__name__} its metadata "
                          f"describes: {shown}")


def model_config(path: pathlib.Path, metadata: dict[str, Any]) -> dict[str, Any]:
    """The `model:` section of the run's config stored in the export."""
    try:
        config = yaml.safe_load(metadata["config"])
    except yaml.YAMLError as error:
        raise ExportError(f"{path}: metadata 'config' is not YAML ({error})") from None
    model = config.get("model") if isinstance(config, dict) else None
    if not isinstance(model, dict) or model.get("name") != metadata["model"]:
        raise ExportError(f"{path}: metadata 'config' has no model section named {metadata['model']!r}")
    return model


def load_export(path: str | pathlib.Path) -> tuple[nn.Module, dict[str, Any]]:
    """The exported network as its PyTorch twin (CPU, float32, eval mode) and the export's metadata."""
    path = pathlib.Path(path)
    state, metadata = read_export(path)
    channels, height, width = metadata["input_shape"]
    try:
        module = build_model(model_config(path, metadata), channels, height, width, metadata["classes"])
    except ValueError as error:
        raise ExportError(f"{path}: cannot rebuild the network: {error}") from None
    check_state(path, module, state)
    module.load_state_dict(state, strict=True)
    return module.eval(), metadata


def preprocess(images: np.ndarray, metadata: dict[str, Any]) -> torch.Tensor:
    """uint8 [N, H, W, C] images -> the float32 [N, C, H, W] network input fusetrain computes from them:
    v = pixel * (1/255) and, when the export says normalize, (v - mean) * (1/std), all in float32."""
    channels, height, width = metadata["input_shape"]
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[1:] != (height, width, channels):
        raise ValueError(f"preprocess: expected uint8 images [N, {height}, {width}, {channels}], not "
                         f"{images.dtype} {list(images.shape)}")
    x = images.astype(np.float32) * (np.float32(1) / np.float32(255))
    if metadata["normalize"]:
        mean = np.asarray(metadata["mean"], dtype=np.float32)
        inv_std = (1.0 / np.asarray(metadata["std"], dtype=np.float64)).astype(np.float32)
        x = (x - mean) * inv_std
    return torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("export", type=pathlib.Path, help="a fusetrain export (.safetensors or .pt)")
    parser.add_argument("--onnx", type=pathlib.Path, help="write the network as ONNX to this file")
    parser.add_argument("--check", type=pathlib.Path, help="an HDF5 file of fusetrain evaluate --logits N")
    parser.add_argument("--data", type=pathlib.Path, help="shard folder for --check (default: evaluate's)")
    parser.add_argument("--rtol", type=float, default=1e-5, help="--check: twin vs fusetrain logits")
    parser.add_argument("--onnx-rtol", type=float, default=1e-4, help="--check: ONNX vs twin logits")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        module, metadata = load_export(args.export)
    except ExportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{args.export}: {metadata['model']} on {metadata['dataset']} {metadata['input_shape']}, "
          f"{metadata['classes']} classes, {sum(p.numel() for p in module.parameters()):,} parameters")
    if args.onnx:
        from onnx_writer import write_onnx
        write_onnx(module, metadata, args.onnx)
        print(f"onnx: {args.onnx}")
    if args.check:
        from evaluation_check import check_against_evaluation
        return check_against_evaluation(module, lambda images: preprocess(images, metadata), args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
