# One model's two `fusetrain export` files checked: tools/export/fusetrain_model.py --onnx --check against
# fusetrain evaluate, both formats holding the same tensors and metadata, torch.load(weights_only=True), ONNX at
# other batch sizes, and clear refusals of a tampered export and of a file that is no export.
"""Usage: check_export.py SOURCE_DIR EXPORT.safetensors EXPORT.pt OUT.onnx EVAL.h5 DATA_DIR   (exit 0: all hold)

Runs `fusetrain_model.py EXPORT.safetensors --onnx OUT.onnx --check EVAL.h5 --data DATA_DIR` in this process
(one torch start-up less), then the checks below; EVAL.h5 doubles as the file that is no export."""
from __future__ import annotations

import pathlib
import sys
import tempfile

import numpy as np
import torch

source = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(source / "tools" / "export"))
from fusetrain_model import ExportError, load_export, main, read_export  # noqa: E402
from onnx_writer import onnx_predictor  # noqa: E402

EXPECTED_KEYS = {"format", "format_version", "model", "config", "input_shape", "classes", "class_names", "mean",
                 "std", "normalize", "dataset"}


def same_exports(safetensors_path: str, torch_path: str) -> None:
    """Both formats: equal names, dtypes and bits; equal metadata once the safetensors strings are parsed."""
    st_state, st_meta = read_export(safetensors_path)
    raw = torch.load(torch_path, map_location="cpu", weights_only=True)
    pt_state, pt_meta = raw["state_dict"], raw["metadata"]
    assert list(st_state) and set(st_state) == set(pt_state), \
        f"tensor names differ: {sorted(set(st_state) ^ set(pt_state))}"
    for name, tensor in st_state.items():
        other = pt_state[name]
        assert tensor.dtype == other.dtype and torch.equal(tensor, other), f"tensor {name} differs between formats"
        expected = torch.int64 if name.endswith("num_batches_tracked") else torch.float32
        assert tensor.dtype == expected, f"{name} is {tensor.dtype}, not {expected}"
    assert EXPECTED_KEYS <= set(pt_meta), f"torch metadata lacks {sorted(EXPECTED_KEYS - set(pt_meta))}"
    assert st_meta == pt_meta, f"metadata differs: {st_meta} vs {pt_meta}"
    assert isinstance(pt_meta["classes"], int) and isinstance(pt_meta["normalize"], bool)
    batches = [t for n, t in st_state.items() if n.endswith("num_batches_tracked")]
    assert all(int(t) > 0 for t in batches), "a BatchNorm saw no training batch"
    print(f"exports: {len(st_state)} identical tensors, identical metadata, torch weights_only load ok")


def onnx_batches(export_path: str, onnx_path: str) -> None:
    """The ONNX graph's batch dimension is dynamic: batches of 1 and 3 give the twin's logits."""
    module, metadata = load_export(export_path)
    run = onnx_predictor(onnx_path)
    generator = torch.Generator().manual_seed(0)
    for batch in (1, 3):
        x = torch.randn(batch, *metadata["input_shape"], generator=generator)
        with torch.no_grad():
            expected = module(x).numpy()
        got = run(x)
        error = np.abs(got - expected).max() / np.abs(expected).max()
        assert got.shape == expected.shape and error <= 1e-4, f"onnx batch {batch}: {got.shape}, error {error}"
    print("onnx: batches of 1 and 3 match the twin")


def not_an_export_refused(path: str) -> None:
    try:
        load_export(path)
    except ExportError as error:
        assert "neither a safetensors file nor a torch.save archive" in str(error), str(error)
    else:
        raise AssertionError(f"{path} was loaded as an export")


def tampered_refused(torch_path: str) -> None:
    """An export missing one tensor and with another reshaped is refused, naming both."""
    raw = torch.load(torch_path, map_location="cpu", weights_only=True)
    names = list(raw["state_dict"])
    dropped, reshaped = names[0], names[1]
    del raw["state_dict"][dropped]
    raw["state_dict"][reshaped] = torch.zeros(7, 1, 1)
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "tampered.pt"
        torch.save(raw, path)
        try:
            load_export(path)
        except ExportError as error:
            message = str(error)
        else:
            raise AssertionError("a tampered export was accepted")
    assert f"missing {dropped}" in message and f"{reshaped} is [7, 1, 1]" in message, message
    print(f"tampered export refused: {message[:160]}")


if __name__ == "__main__":
    safetensors_file, torch_file, onnx_file, evaluation, data = sys.argv[2:7]
    if main([safetensors_file, "--onnx", onnx_file, "--check", evaluation, "--data", data]) != 0:
        sys.exit("FAIL: the exported network disagrees with fusetrain evaluate or ONNX Runtime")
    same_exports(safetensors_file, torch_file)
    onnx_batches(safetensors_file, onnx_file)
    tampered_refused(torch_file)
    not_an_export_refused(evaluation)
    print("PASS")
