# Reads fusetrain results files (the HDF5 layout of docs/results.md) into plain Python objects, and finds
# the results of a sweep directory (points.tsv) or of a folder of .h5 files, for plots.py and summary.py.
"""Results-file reader shared by the report tools.

The layout is FIELDS below: file attributes and /config, /provenance attributes, the tables /epochs,
/ranks (with the time split data_s ... eval_s), /rank_epochs (every rank's own train and test figures per
evaluated epoch), /segments (one row per start or resume: world size, batch, where it began), /utilization and /model (one dataset per column), and
/summary attributes. Evaluation files (`fusetrain evaluate`) hold EVALUATION_FIELDS: /evaluation
attributes, one column per class and the confusion matrix (logits and labels only with --logits). The
writer's own table (src/results/results_fields.cpp, listed as JSON by `fusetrain report --fields`) must
agree with both; check_fields() says where it does not, and the test report.tools fails then.
"""
from __future__ import annotations

import dataclasses
import pathlib

import h5py
import numpy as np

PHASES = ("data_s", "forward_s", "backward_s", "comm_wait_s", "optimizer_s", "eval_s")
FORMAT_VERSION = 4

_TEXT, _I32, _I64, _F64 = "string", "int32", "int64", "float64"
# group -> {field: stored HDF5 type}; tables store int and bool columns as int32, attributes as int64.
FIELDS = {
    "/": {"name": _TEXT, "model": _TEXT, "dataset": _TEXT, "precision": _TEXT, "batch_size": _I64, "model_file": _TEXT,
          "config": _TEXT},
    "/provenance": {"program_version": _TEXT, "git_commit": _TEXT, "torch_version": _TEXT, "cuda_version": _TEXT,
                    "mpi_version": _TEXT, "command_line": _TEXT, "started_at": _TEXT, "backend": _TEXT,
                    "allreduce": _TEXT, "world_size": _I64, "node_count": _I64},
    "/epochs": {"epoch": _I32, "evaluated": _I32, "train_loss": _F64, "train_acc": _F64, "test_loss": _F64,
                "test_acc": _F64, "lr": _F64, "epoch_time_s": _F64, "images_per_s": _F64, "weights_digest": _TEXT,
                "optimizer_digest": _TEXT},
    "/ranks": {"hostname": _TEXT, "device": _TEXT, "local_rank": _I32, "peak_memory_bytes": _I64,
               "peak_allocated_bytes": _I64, "train_images": _I64, "allreduce_bytes": _I64, "allreduce_s": _F64, "comm_hidden_fraction": _F64,
               "slow_step_share": _F64, "compute_excess": _F64, **{phase: _F64 for phase in PHASES}, "phase_clock": _TEXT,
               "train_loss": _F64, "train_acc": _F64, "test_images": _I64, "test_loss": _F64, "test_acc": _F64},
    "/rank_epochs": {"rank": _I32, "epoch": _I32, "train_loss": _F64, "train_acc": _F64, "test_loss": _F64,
                     "test_acc": _F64},
    "/segments": {"segment": _I32, "world_size": _I32, "node_count": _I32, "backend": _TEXT, "device": _TEXT,
                  "started_at": _TEXT, "start_epoch": _I32, "start_step": _I64, "start_sample": _I64,
                  "per_rank_batch": _I32, "accumulation": _I32, "global_batch": _I64, "lr_factor": _F64,
                  "wall_time_s": _F64},
    "/utilization": {"time_s": _F64, "rank": _I32, "gpu_percent": _F64, "memory_percent": _F64},
    "/model": {"name": _TEXT, "output_shape": _TEXT, "parameters": _I64},
    "/summary": {"wall_time_s": _F64, "train_time_s": _F64, "best_test_acc": _F64, "best_epoch": _I64,
                 "final_test_acc": _F64, "final_test_loss": _F64, "epochs_run": _I64, "images_per_s": _F64,
                 "peak_memory_bytes": _I64, "overfit": _I64, "overfit_epoch": _I64, "stopped_early": _I64,
                 "optimizer_steps": _I64, "skipped_steps": _I64, "bucket_mib": _F64, "first_bucket_mib": _F64,
                 "last_bucket_mib": _F64, "buckets_autotuned": _I64, "graph_captures": _I64, "graph_replays": _I64,
                 "train_steps_s": _F64, "warmup_steps": _I64, "warmup_s": _F64, "cold_s": _F64,
                 "straggler_rank": _I64, "straggler_slow_share": _F64, "straggler_excess": _F64,
                 "straggler_wait_share": _F64, "straggler_windows": _I64},
}

EVALUATION_FORMAT_VERSION = 1
_F32 = "float32"
EVALUATION_FIELDS = {
    "/evaluation": {"split": _TEXT, "checkpoint": _TEXT, "data": _TEXT, "dataset": _TEXT, "model": _TEXT,
                    "tta": _TEXT, "images": _I64, "loss": _F64, "label_smoothing": _F64, "top1": _F64, "top5": _F64, "top_k": _I64,
                    "class_names": _TEXT, "precision": _F64, "recall": _F64, "accuracy": _F64, "support": _I64,
                    "predicted": _I64, "confusion": _I64, "logits": _F32, "labels": _I64},
}
_EVALUATION_OPTIONAL = {"logits", "labels"}  # written with --logits only
# Fields added after format_version 4 was first written: a file written before lacks them, and a Run read
# from it has no such key.
_ADDED_LATER = {("/ranks", "peak_allocated_bytes")}


def check_fields(listing: dict) -> list[str]:
    """Where FIELDS disagrees with the writer's field listing (the JSON of `fusetrain report --fields`)."""
    problems = []
    if listing.get("format_version") != FORMAT_VERSION:
        problems.append(f"format_version: the writer's is {listing.get('format_version')}, this reader's {FORMAT_VERSION}")
    written = {(f["group"], f["name"]): f["stored"] for f in listing["fields"]}
    known = {**FIELDS, **EVALUATION_FIELDS}
    for group, fields in known.items():
        for name, stored in fields.items():
            if (group, name) not in written:
                problems.append(f"{group}/{name}: read here but not written")
            elif written[(group, name)] != stored:
                problems.append(f"{group}/{name}: stored as {written[(group, name)]}, read here as {stored}")
    for group, name in written:
        if name not in known.get(group, {}):
            problems.append(f"{group}/{name}: written but unknown to tools/report/results.py")
    return problems


@dataclasses.dataclass
class Run:
    path: pathlib.Path
    name: str
    model: str
    dataset: str
    precision: str
    batch_size: int
    model_file: str     # the trained network's file, "" when the run kept none
    config: str
    provenance: dict
    epochs: dict        # column -> numpy array, one entry per epoch
    ranks: dict         # column -> numpy array (hostname, device: lists of str), one entry per rank
    rank_epochs: dict   # rank, epoch and each rank's own train/test loss and accuracy, one entry per rank and
                        # evaluated epoch (epoch by epoch, ranks in order within an epoch)
    segments: dict      # one entry per start or resume: world_size, node_count, batch split, start epoch/step
    utilization: dict   # column -> numpy array, one entry per sample
    layers: dict        # /model: name, output_shape (lists of str), parameters, one entry per layer
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


def _require_fields(f) -> None:
    """Raises ValueError naming the first field of FIELDS that the file lacks."""
    version = f.attrs.get("format_version")
    if version != FORMAT_VERSION:
        raise ValueError(f"results format_version {version} is not {FORMAT_VERSION}")
    for group, fields in FIELDS.items():
        if group not in f:
            raise ValueError(f"missing group {group}")
        for name in fields:
            if name not in f[group].attrs and name not in f[group] and (group, name) not in _ADDED_LATER:
                raise ValueError(f"{group.rstrip('/')}/{name}: missing")


def read_run(path) -> Run:
    """One results file; a file that is not one (or a damaged one) raises ValueError naming it."""
    path = pathlib.Path(path)
    try:
        with h5py.File(path, "r") as f:
            if _text(f.attrs.get("format", b"")) != "fusetrain-results":
                raise ValueError("not a fusetrain results file (no format=fusetrain-results attribute)")
            _require_fields(f)
            return Run(path=path, name=_text(f.attrs["name"]), model=_text(f.attrs["model"]),
                       dataset=_text(f.attrs["dataset"]), precision=_text(f.attrs["precision"]),
                       batch_size=int(f.attrs["batch_size"]), model_file=_text(f.attrs["model_file"]),
                       config=_text(f["config"][0]),
                       provenance=_attrs(f["provenance"]), epochs=_columns(f["epochs"]),
                       ranks=_columns(f["ranks"]), rank_epochs=_columns(f["rank_epochs"]),
                       segments=_columns(f["segments"]), utilization=_columns(f["utilization"]),
                       layers=_columns(f["model"]), summary=_attrs(f["summary"]))
    except (OSError, KeyError, ValueError) as e:
        raise ValueError(f"{path}: {e}") from e


@dataclasses.dataclass
class Evaluation:
    path: pathlib.Path
    summary: dict            # /evaluation attributes: split, checkpoint, images, loss, top1, top5, ...
    classes: dict            # class_names (list of str), precision, recall, accuracy, support, predicted
    confusion: np.ndarray    # int64 [K, K]: rows true class, columns predicted
    logits: np.ndarray | None = None   # float32 [N, K], with --logits only
    labels: np.ndarray | None = None   # int64 [N]


def read_evaluation(path) -> Evaluation:
    """One evaluation file of `fusetrain evaluate`; any other (or a damaged) file raises ValueError naming it."""
    path = pathlib.Path(path)
    try:
        with h5py.File(path, "r") as f:
            if _text(f.attrs.get("format", b"")) != "fusetrain-evaluation":
                raise ValueError("not a fusetrain evaluation file (no format=fusetrain-evaluation attribute)")
            if f.attrs.get("format_version") != EVALUATION_FORMAT_VERSION:
                raise ValueError(f"evaluation format_version {f.attrs.get('format_version')} is not "
                                 f"{EVALUATION_FORMAT_VERSION}")
            if "evaluation" not in f:
                raise ValueError("missing group /evaluation")
            group = f["evaluation"]
            for name in EVALUATION_FIELDS["/evaluation"]:
                if name not in group.attrs and name not in group and name not in _EVALUATION_OPTIONAL:
                    raise ValueError(f"/evaluation/{name}: missing")
            columns = _columns(group)
            confusion = columns.pop("confusion")
            k = len(columns["class_names"])
            if confusion.shape != (k, k):
                raise ValueError(f"/evaluation/confusion: shape {confusion.shape} is not ({k}, {k})")
            return Evaluation(path=path, summary=_attrs(group), confusion=confusion,
                              logits=columns.pop("logits", None), labels=columns.pop("labels", None),
                              classes=columns)
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
