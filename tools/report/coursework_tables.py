# The numbers of the coursework report's run tables: columns named after what was measured (peak RSS, CPU or
# CUDA peak allocated), values printed so that every derived column (speed-up, % change) recomputes by hand.
"""Run rows, per-rank rows, change rows and the flags of runs too short to judge, for coursework.py."""
from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import yaml

from results import Run

MIB = 1024.0 ** 2
MIN_STEPS = 4  # optimizer steps per epoch below which a run is flagged as too short to judge
NEAR_CHANCE = 5  # a test accuracy at most this many points above chance is flagged too
RSS = "peak RSS (MiB)"
CPU_ALLOCATED = "CPU peak allocated (MiB)"
CUDA_ALLOCATED = "CUDA peak allocated (MiB)"
NOT_RECORDED = "not recorded"
MEMORY_MEANING = (
    "Memory: on a GPU, **CUDA peak allocated** is the CUDA caching allocator's peak of live tensor bytes (what "
    "the students' torch.cuda.max_memory_allocated reports). On the CPU, **peak RSS** is the process's peak "
    "resident set: LibTorch's libraries, MPI and the C++ heap make up most of it before any tensor exists, so it "
    "barely moves between runs; **CPU peak allocated** is the peak of live tensor bytes in LibTorch's CPU "
    "allocator during training (the rank's data slice, weights, gradients, optimizer state, activations): the "
    "CPU counterpart of CUDA peak allocated, and the figure every change table compares. Both peaks cover the "
    "whole run, evaluation included (batches of data.test_batch_size test images per rank).")


def sig(x: float, digits: int = 3) -> str:
    """x with at least `digits` significant digits and no exponent: 0.614, 12.3, 460, 1234."""
    if x == 0 or not math.isfinite(x):
        return f"{x:.{digits - 1}f}"
    return f"{x:.{max(digits - 1 - math.floor(math.log10(abs(x))), 0)}f}"


def config_section(run: Run, *keys: str) -> dict:
    """A section of the run's resolved config (e.g. "data", "augment"), {} where it or a part is absent."""
    section = yaml.safe_load(run.config) or {}
    for key in keys:
        section = section.get(key) or {}
    return section


def ranks(run: Run) -> int:
    return int(run.provenance.get("world_size", 1))


def device(run: Run) -> str:
    return ", ".join(sorted(set(run.ranks["device"])))


def on_gpu(run: Run) -> bool:
    return any(not d.startswith("cpu") for d in run.ranks["device"])


def accumulation_steps(run: Run) -> int:
    return int(config_section(run, "train").get("accumulation_steps", 1))


def batch(run: Run) -> str:
    """Images per rank per micro-batch, and the global batch of one optimizer step (x ranks x accumulation)."""
    steps = accumulation_steps(run)
    detail = f", {steps} accumulation steps" if steps > 1 else ""
    return f"local {run.batch_size} (global {run.batch_size * ranks(run) * steps}{detail})"


def steps_per_epoch(run: Run) -> float:
    return int(run.summary["optimizer_steps"]) / max(int(run.summary["epochs_run"]), 1)


def steps_text(run: Run) -> str:
    steps = steps_per_epoch(run)
    return str(int(steps)) if steps == int(steps) else f"{steps:.1f}"


def classes(run: Run) -> int:
    """Classes of the network's output: the last layer's output shape in the model summary."""
    last = str(run.layers["output_shape"][-1]) if len(run.layers.get("output_shape", [])) else ""
    return int(last) if last.isdigit() else 10


def last_train_acc(run: Run) -> float:
    return 100 * float(run.epochs["train_acc"][-1])


def test_acc(run: Run) -> float:
    return 100 * float(run.summary["final_test_acc"])


def flags(run: Run) -> list[str]:
    """Why a run is too short to judge: too few optimizer steps per epoch, or a test accuracy not above chance."""
    found = []
    if steps_per_epoch(run) < MIN_STEPS:
        found.append(f"{steps_text(run)} optimizer step(s) per epoch (fewer than {MIN_STEPS})")
    chance = 100.0 / classes(run)
    if test_acc(run) <= chance + NEAR_CHANCE:
        found.append(f"test accuracy {test_acc(run):.2f}% is within {NEAR_CHANCE} points of chance ({chance:.0f}% for "
                     f"{classes(run)} classes)")
    return found


def peak_memory_mib(run: Run, rank: int | None = None) -> float:
    column = np.asarray(run.ranks["peak_memory_bytes"], dtype=float)
    return float(np.max(column) if rank is None else column[rank]) / MIB


def allocated_mib(run: Run, rank: int | None = None) -> float | None:
    """Peak allocated tensor bytes (max over ranks, or one rank's) in MiB; None for a file that lacks them."""
    if "peak_allocated_bytes" not in run.ranks:
        return None
    column = np.asarray(run.ranks["peak_allocated_bytes"], dtype=float)
    return float(np.max(column) if rank is None else column[rank]) / MIB


def memory_columns(runs: list[Run]) -> list[str]:
    """The memory headers of a table of these runs: what each device measured."""
    gpu, cpu = any(on_gpu(r) for r in runs), any(not on_gpu(r) for r in runs)
    return ([CUDA_ALLOCATED] if gpu else []) + ([RSS, CPU_ALLOCATED] if cpu or not runs else [])


def memory_cells(run: Run, columns: list[str], rank: int | None = None) -> list[str]:
    """The run's (or one rank's) value under each of `columns`; "-" under a column of the other device."""
    allocated = allocated_mib(run, rank)
    gpu = on_gpu(run)
    values = {CUDA_ALLOCATED: peak_memory_mib(run, rank) if gpu else None,
              RSS: None if gpu else peak_memory_mib(run, rank),
              CPU_ALLOCATED: None if gpu else allocated if allocated is not None else NOT_RECORDED}
    return ["-" if values[c] is None else values[c] if isinstance(values[c], str) else sig(values[c])
            for c in columns]


def training_memory(run: Run) -> tuple[str, float | None]:
    """The memory the training itself held, with its name: CUDA or CPU peak allocated (MiB)."""
    return ("CUDA peak allocated", peak_memory_mib(run)) if on_gpu(run) else ("CPU peak allocated", allocated_mib(run))


RUN_COLUMNS = ["run", "ranks", "device", "batch", "epochs", "steps per epoch", "train time (s)", "total time (s)"]
ACC_COLUMNS = ["train acc (%)", "test acc (%)"]


def run_header(runs: list[Run]) -> list[str]:
    return RUN_COLUMNS + memory_columns(runs) + ACC_COLUMNS


def run_row(name: str, run: Run, memory: list[str]) -> list:
    s = run.summary
    return ([name, ranks(run), device(run), batch(run), len(run.epochs["epoch"]), steps_text(run),
             sig(s["train_time_s"]), sig(s["wall_time_s"])] + memory_cells(run, memory)
            + [f"{last_train_acc(run):.2f}", f"{test_acc(run):.2f}"])


def change_header(word: str) -> list[str]:
    return ["pair", "ranks", "train time (s)", "speed-up", "scaling efficiency (%)", "train time change (%)",
            f"{word} (MiB)", f"{word} change (%)", "test acc (%)", "test acc change (points)"]


def change_word(pairs: list[tuple[Run, Run]]) -> str:
    """The memory the change columns compare: CUDA peak allocated on GPUs, CPU peak allocated on CPUs."""
    return training_memory(pairs[0][1])[0] if pairs else "CPU peak allocated"


def change_row(name: str, one: Run, many: Run) -> list:
    """Many ranks against one, as the students computed by hand, from the values printed beside them: speed-up
    of training time, that speed-up per added rank (efficiency), % change of training time and of the memory
    the training held per rank, and the change of test accuracy in points."""
    t1, tn = (float(sig(r.summary["train_time_s"])) for r in (one, many))
    a1, an = (float(f"{test_acc(r):.2f}") for r in (one, many))
    speedup = t1 / max(tn, 1e-9)
    m1, mn = training_memory(one)[1], training_memory(many)[1]
    if m1 is None or mn is None:
        memory = [NOT_RECORDED, NOT_RECORDED]
    else:
        m1, mn = float(sig(m1)), float(sig(mn))
        memory = [f"{sig(m1)} -> {sig(mn)}", f"{100 * (mn - m1) / max(m1, 1e-9):+.1f}"]
    return ([name, f"{ranks(one)} -> {ranks(many)}", f"{sig(t1)} -> {sig(tn)}", f"{speedup:.2f}x",
             f"{100 * speedup * ranks(one) / ranks(many):.1f}", f"{100 * (tn - t1) / t1:+.1f}"] + memory
            + [f"{a1:.2f} -> {an:.2f}", f"{an - a1:+.2f}"])


PREDICTED_COLUMNS = ["predicted scaling efficiency (%)", "predicted speed-up"]


def predicted_cells(plan: pathlib.Path, many: int) -> list[str]:
    """`fusetrain plan`'s efficiency for `many` ranks from its JSON file, and the speed-up it means (many x the
    efficiency); "-" twice when the prediction was not made."""
    if not plan.is_file():
        return ["-", "-"]
    rows = [r for r in json.loads(plan.read_text())["rows"] if r["devices"] == many and r["allreduce"] == "flat"]
    if not rows:
        return ["-", "-"]
    efficiency = float(f"{100 * rows[0]['efficiency']:.1f}")
    return [f"{efficiency:.1f}", f"{many * efficiency / 100:.2f}x"]


PHASES = ("forward_s", "backward_s", "comm_wait_s", "data_s")
COMPUTE = ("forward_s", "backward_s", "optimizer_s")
OWN_COLUMNS = (("train_loss", "own train loss", 1), ("train_acc", "own train acc (%)", 100),
               ("test_loss", "own test loss", 1), ("test_acc", "own test acc (%)", 100))


def rank_seconds(run: Run, r: int) -> float:
    """Rank r's training seconds: compute, waiting for communication and loading data (evaluation left out)."""
    return sum(float(run.ranks[c][r]) for c in COMPUTE + ("comm_wait_s", "data_s"))


def rank_rows(run: Run) -> tuple[list[str], list[list]]:
    """Per-rank rows: time split, memory, images, and each rank's own loss/accuracy (train, then its slice of the
    test split) when recorded."""
    own = [(c, h, scale) for c, h, scale in OWN_COLUMNS if c in run.ranks]
    memory = memory_columns([run])
    header = (["rank", "host", "device", "time (s)", "forward (s)", "backward (s)", "comm wait (s)", "data (s)"]
              + memory + ["train images"] + [h for _, h, _ in own])
    rows = []
    for r in range(len(run.ranks["hostname"])):
        rows.append([r, run.ranks["hostname"][r], run.ranks["device"][r], sig(rank_seconds(run, r))]
                    + [sig(float(run.ranks[p][r])) for p in PHASES] + memory_cells(run, memory, r)
                    + [int(run.ranks["train_images"][r])]
                    + [f"{scale * float(run.ranks[c][r]):.4f}" if scale == 1 else
                       f"{scale * float(run.ranks[c][r]):.2f}" for c, _, scale in own])
    return header, rows


def rank_table_rows(runs: list[Run]) -> tuple[list[str], list[list]]:
    """One row per rank of every run: its training seconds, memory and accuracy on its own test slice."""
    memory = memory_columns(runs)
    header = ["run", "batch", "rank", "time (s)"] + memory + ["own test acc (%)"]
    rows = [[run.name, batch(run), r, sig(rank_seconds(run, r))] + memory_cells(run, memory, r)
            + [f"{100 * float(run.ranks['test_acc'][r]):.2f}"]
            for run in runs for r in range(len(run.ranks["hostname"]))]
    return header, rows
