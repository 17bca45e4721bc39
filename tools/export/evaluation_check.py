# Checks a loaded fusetrain export against `fusetrain evaluate --logits N`: the PyTorch twin's logits and
# accuracy on the same images, and (with --onnx) ONNX Runtime's logits against the twin's.
from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys
from typing import Any, Callable

import h5py
import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "bench"))
from pytorch_baseline import read_split  # noqa: E402

BATCH = 256


@dataclasses.dataclass
class Evaluation:
    """What fusetrain evaluate wrote to /evaluation."""
    logits: np.ndarray  # float32 [N, K]
    labels: np.ndarray  # int64 [N]
    top1: float
    images: int
    split: str
    data: str
    tta: str


def field(group: h5py.Group, name: str, default: Any = None) -> Any:
    """A summary value stored as a dataset or as an attribute of the group."""
    value = group[name][()] if name in group else group.attrs.get(name, default)
    if value is None:
        raise ValueError(f"{group.file.filename}: {group.name} has no '{name}'")
    return value.decode() if isinstance(value, bytes) else value


def read_evaluation(path: pathlib.Path) -> Evaluation:
    with h5py.File(path, "r") as f:
        if "evaluation" not in f or "logits" not in f["evaluation"]:
            raise ValueError(f"{path}: no /evaluation/logits (run fusetrain evaluate with --logits N)")
        g = f["evaluation"]
        return Evaluation(g["logits"][...], g["labels"][...].astype(np.int64), float(field(g, "top1")),
                          int(field(g, "images")), str(field(g, "split", "test")), str(field(g, "data", "")),
                          str(field(g, "tta", "none")))


def predict(forward: Callable[[torch.Tensor], np.ndarray], images: np.ndarray,
            prepare: Callable[[np.ndarray], torch.Tensor]) -> np.ndarray:
    """Logits for uint8 NHWC images, batch by batch."""
    return np.concatenate([forward(prepare(images[i:i + BATCH])) for i in range(0, len(images), BATCH)])


def relative(a: np.ndarray, b: np.ndarray) -> float:
    """max|a - b| / max|b|: the largest difference relative to the largest reference logit."""
    return float(np.abs(a - b).max() / max(float(np.abs(b).max()), np.finfo(np.float32).tiny))


def verdict(label: str, value: float, tolerance: float) -> bool:
    ok = value <= tolerance
    print(f"{label} = {value:.3g} (tolerance {tolerance:g}) {'ok' if ok else 'MISMATCH'}")
    return ok


def check_against_evaluation(module: nn.Module, prepare: Callable[[np.ndarray], torch.Tensor],
                             args: argparse.Namespace) -> int:
    """Prints one line per comparison; 0 when all agree, 1 otherwise. `prepare` turns uint8 NHWC images into
    the network's input (fusetrain_model.preprocess with the export's metadata)."""
    evaluation = read_evaluation(args.check)
    data = args.data or pathlib.Path(evaluation.data)
    split = read_split(data, evaluation.split)
    images, labels = split.images[:evaluation.images], split.labels[:evaluation.images]
    n = len(evaluation.logits)
    if len(images) != evaluation.images or not np.array_equal(labels[:n], evaluation.labels):
        raise SystemExit(f"{data}: its {evaluation.split} split is not the one {args.check} evaluated "
                         f"({len(images)} of {evaluation.images} images, or other labels)")

    with torch.no_grad():
        twin = predict(lambda x: module(x).numpy(), images, prepare)
    ok = verdict(f"logits of {n} images: max|twin - fusetrain| / max|fusetrain|", relative(twin[:n], evaluation.logits),
                 args.rtol)
    correct, expected = int((twin.argmax(1) == labels).sum()), round(evaluation.top1 * evaluation.images)
    if evaluation.tta == "none":
        print(f"top-1 over {evaluation.images} {evaluation.split} images: twin {correct / evaluation.images:.6f}, "
              f"fusetrain {evaluation.top1:.6f} {'ok' if correct == expected else 'MISMATCH'}")
        ok = ok and correct == expected
    else:  # the stored logits never have test-time augmentation; the accuracy does
        print(f"top-1 not compared: fusetrain evaluated with tta {evaluation.tta}, the twin runs without")
    if args.onnx:
        from onnx_writer import onnx_predictor
        runtime = predict(onnx_predictor(args.onnx), images[:n], prepare)
        ok = verdict(f"logits of {n} images: max|onnx - twin| / max|twin|", relative(runtime, twin[:n]),
                     args.onnx_rtol) and ok
    return 0 if ok else 1
