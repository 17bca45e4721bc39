# Reads fusetrain results files (the HDF5 layout of README "Results") into plain Python objects, and finds
# the results of a sweep directory (points.tsv) or of a folder of .h5 files, for plots.py and summary.py.
"""Results-file reader shared by the report tools.

Layout read here (written by src/results/results_file.cpp): file attributes name, model, dataset,
precision, batch_size; /config (YAML text); /provenance attributes; /epochs/<column>; /ranks/<column>
with the time split data_s, forward_s, backward_s, comm_wait_s, optimizer_s, eval_s; /utilization/
{time_s, rank, gpu_percent, memory_percent}; /summary attributes.
"""
from __future__ import annotations

import dataclasses
import pathlib

import h5py
import numpy as np

PHASES = ("data_s", "forward_s", "backward_s", "comm_wait_s", "optimizer_s", "eval_s")


@dataclasses.dataclass
class Run:
    path: pathlib.Path
    name: str
    model: str
    dataset: str
    precision: str
    batch_size: int
    config: str
    provenance: dict
    epochs: dict        # column -> numpy array, one entry per epoch
    ranks: dict         # column -> numpy array (hostname, device: lists of str), one entry per rank
    utilization: dict   # column -> numpy array, one entry per sample
    summary: dict


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _attrs(obj) -> dict:
    return {k: _text(v) if isinstance(v, (bytes, str)) else v.item() if hasattr(v, "item") else v
            for k, v in obj.attrs.items()}


def _columns(group) -> dict:
    out = {}
    for key, dataset in group.items():
        data = dataset[()]
        if data.dtype.kind in "OSU":
            out[key] = [_text(v) for v in data]
        else:
            out[key] = np.asarray(data)
    return out


def read_run(path) -> Run:
    """One results file; a file that is not one (or a damaged one) raises ValueError naming it."""
    path = pathlib.Path(path)
    try:
        with h5py.File(path, "r") as f:
            if _text(f.attrs.get("format", b"")) != "fusetrain-results":
                raise ValueError("not a fusetrain results file (no format=fusetrain-results attribute)")
            return Run(path=path, name=_text(f.attrs["name"]), model=_text(f.attrs["model"]),
                       dataset=_text(f.attrs["dataset"]), precision=_text(f.attrs["precision"]),
                       batch_size=int(f.attrs["batch_size"]), config=_text(f["config"][0]),
                       provenance=_attrs(f["provenance"]), epochs=_columns(f["epochs"]),
                       ranks=_columns(f["ranks"]), utilization=_columns(f["utilization"]),
                       summary=_attrs(f["summary"]))
    except (OSError, KeyError, ValueError) as e:
        raise ValueError(f"{path}: {e}") from e


def sweep_points(directory) -> list[dict]:
    """The points of a sweep directory written by `fusetrain sweep`, in order, from its points.tsv:
    dicts with index, name, ranks, results (path) and overrides ({key: value})."""
    directory = pathlib.Path(directory)
    points = []
    for line in (directory / "points.tsv").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        index, name, ranks, _config, out, *overrides = line.split("\t")
        points.append({"index": int(index), "name": name, "ranks": int(ranks),
                       "results": pathlib.Path(out) / f"{name}.h5",
                       "overrides": dict(o.split("=", 1) for o in overrides)})
    return points


def varied_keys(points) -> list[str]:
    """Config keys whose value differs between points, in first-seen order."""
    keys = []
    for p in points:
        for key in p["overrides"]:
            if key not in keys and len({q["overrides"].get(key) for q in points}) > 1:
                keys.append(key)
    return keys


def find_results(arguments) -> tuple[list[pathlib.Path], list[str], list[str]]:
    """Results files named by the arguments (files, sweep directories or folders of .h5 files):
    returns (files, missing point names, varied config keys of the sweeps)."""
    files, missing, keys = [], [], []
    for argument in arguments:
        path = pathlib.Path(argument)
        if path.is_dir() and (path / "points.tsv").exists():
            points = sweep_points(path)
            for p in points:
                if p["results"].exists():
                    files.append(p["results"])
                else:
                    missing.append(p["name"])
            keys += [k for k in varied_keys(points) if k not in keys]
        elif path.is_dir():
            files += sorted(path.rglob("*.h5"))
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"{path}: no such file or directory")
    return files, missing, keys
