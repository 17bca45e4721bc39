# The coursework report's studies beyond the questions: batch sizes, the largest batch with profiler traces,
# gradient accumulation, optimizers, the AdamW recipe, the last batch, launchers and the kernel benchmarks.
"""Sections of coursework.py after Q2d; write_all(writer) adds them in the report's order."""
from __future__ import annotations

import json
import re

import numpy as np

import plots
from coursework_runs import Coursework, Writer, shard_shape
from coursework_tables import (MIB, accumulation_steps, batch, config_section, device, memory_cells, memory_columns,
                               ranks, sig, steps_per_epoch, steps_text, test_acc, training_memory)
from results import Run, read_run


def batch_sizes(w: Writer) -> None:
    w.page.section("Batch size 16 / 32 / 64 / 128 on one and two ranks")
    runs = w.sweep_table("batch_size", "batch size", ["data.batch_size"])
    if not runs:
        return
    path = w.page.out / "batch_size-throughput.png"
    word = training_memory(runs[0])[0]
    fig, (speed, memory) = plots.plt.subplots(1, 2, figsize=(10, 4))
    for n in sorted({ranks(r) for r in runs}):
        mine = sorted((r for r in runs if ranks(r) == n), key=lambda r: r.batch_size)
        sizes = [r.batch_size for r in mine]
        speed.plot(sizes, [r.summary["images_per_s"] for r in mine], "o-", label=f"{n} rank(s)")
        memory.plot(sizes, [training_memory(r)[1] or 0 for r in mine], "o-", label=f"{n} rank(s)")
    speed.set(xscale="log", xlabel="batch per rank", ylabel="images/s", title="throughput")
    memory.set(xscale="log", xlabel="batch per rank", ylabel=f"{word} (MiB)", title=f"{word} per rank")
    for ax in (speed, memory):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plots.plt.close(fig)
    w.page.figure(path, f"throughput and {word} per batch size")
    pairs = [(b, [r for r in runs if r.batch_size == b]) for b in sorted({r.batch_size for r in runs})]
    w.page.text("The predicted columns are `fusetrain plan`'s, made from the one-rank run's phase times and the "
                "link between two ranks of this host (`fusetrain bench allreduce --sweep`) for 1 node x 2 ranks, "
                "each rank computing as the one-rank run did (a GPU each; CPU ranks of one thread each): the "
                "speed-up that communication alone leaves. Where two ranks share a device or cores, the measured "
                "speed-up falls below it by what they take from each other (docs/planning.md in the source tree).")
    w.change_table("one against two ranks per batch size: change",
                   [(f"batch {b}", min(group, key=ranks), max(group, key=ranks)) for b, group in pairs
                    if len({ranks(r) for r in group}) > 1], predicted=True)
    w.rank_table("batch size per rank", runs)
    w.utilisation(runs)


def limit_rows(text: str) -> tuple[list[list], str]:
    """The rows of `fusetrain bench batch-size`'s table (an out-of-memory row keeps its batch) and its verdict
    line: the largest batch that fits and whether out of memory or the ceiling of the doubling stopped it."""
    rows, verdict = [], ""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0].isdigit():
            utilisation = cells[3] if cells[3] not in ("", "n/a") else "n/a (no GPU sampled)"
            rows.append([cells[0], cells[1], cells[2] or "-", utilisation if cells[2] else "-"])
        elif line.startswith("largest batch that fits:"):
            verdict = line.split("(")[0].strip()
    stopped = ("out of memory at batch " + rows[-1][0] if rows and rows[-1][1] == "out of memory" else
               "the ceiling of the doubling (no out-of-memory error up to it)")
    return rows, f"{verdict}; stopped by {stopped}" if verdict else ""


def own_times(events: list[dict]) -> dict[str, float]:
    """Self time (microseconds) of every CPU operator of a trace: its duration less its children's."""
    ops = sorted((e for e in events if e.get("cat") == "cpu_op" and "dur" in e), key=lambda e: (e["tid"], e["ts"]))
    own: dict[str, float] = {}
    stack: list[tuple[float, str]] = []  # (end time, name) of the enclosing operators on this thread
    for e in ops:
        while stack and stack[-1][0] <= e["ts"]:
            stack.pop()
        if stack:
            own[stack[-1][1]] = own.get(stack[-1][1], 0.0) - e["dur"]
        own[e["name"]] = own.get(e["name"], 0.0) + e["dur"]
        stack.append((e["ts"] + e["dur"], e["name"]))
    return own


def trace_summary(path, cuda: bool) -> list:
    """One Chrome trace in figures: events, size, training steps recorded (one loss forward each), memory events,
    the busiest operator by self time, and the peak the window's allocations reached on the device."""
    events = json.loads(path.read_text()).get("traceEvents", [])
    own = own_times(events)
    busiest = max(own, key=own.get) if own else "-"
    device_type = 1 if cuda else 0  # the profiler's Device Type: 0 CPU, 1 CUDA
    memory = [e["args"] for e in events if e.get("name") == "[memory]" and "args" in e]
    allocated = [a.get("Total Allocated", 0) for a in memory if a.get("Device Type", 0) == device_type]
    steps = sum(1 for e in events if e.get("cat") == "cpu_op" and e.get("name") == "aten::cross_entropy_loss")
    return [len(events), f"{path.stat().st_size / 1024:.0f}", steps, len(memory), busiest,
            sig(own.get(busiest, 0) / 1000), sig(max(allocated, default=0) / MIB)]


def batch_limit(w: Writer) -> None:
    w.page.section("The largest batch that fits, and a profiler window")
    w.page.text("As the article on batch size does: a network trains a few steps on synthetic images at batch 16 "
                "(the article's smallest recommended batch per GPU), 32, 64, ... (`fusetrain bench batch-size`) until "
                "the device runs out of memory or the ceiling is reached; throughput, peak memory and GPU utilisation "
                "per batch size. Full mode uses ResNet-18 at the article's 224x224 (fusetrain's CIFAR variant: a 3x3 "
                "stem without max-pool, so about 16x the activations of the article's ImageNet ResNet-18 per image "
                "and a smaller largest batch), smoke mode the coursework network on the data's images (the line "
                "below names them).")
    source = w.cw.out / "batch_size_limit.md"
    rows, verdict = limit_rows(source.read_text()) if source.exists() else ([], "")
    if not rows:
        w.page.absent("`fusetrain bench batch-size` did not run (no batch_size_limit.md)")
        return
    first = source.read_text().splitlines()[0]
    cpu = " on cpu" in first
    w.page.text(first + (": peak RSS is the process's resident-set high-water mark, which cannot be reset, so each "
                         "row shows the largest so far" if cpu else ""))
    w.page.table("batch limit", ["batch", "images/s", "peak RSS so far (MiB)" if cpu else "CUDA peak allocated (MiB)",
                                 "utilisation (%)"], rows)
    w.page.text(verdict)
    profiles(w, cuda=not cpu)


def profiles(w: Writer, cuda: bool) -> None:
    """The profiled runs at the smallest and largest batch: their schedule, trace figures and links."""
    w.page.text("A short Q1a training run at the smallest and at the largest of these batches with the operator "
                "profiler on (operators, input shapes and memory) writes a Chrome trace: open it in "
                "chrome://tracing or https://ui.perfetto.dev (Open trace file).")
    traces = sorted((w.cw.out / "profiles").glob("batch-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    for reason in (r for stem, r in w.cw.skipped.get("batch_limit", [])):
        w.page.absent(reason)
    if not traces:
        w.page.absent("no profiler trace in profiles/ (the profiled runs did not finish)")
        return
    profiled = w.cw.out / "profiles" / f"{traces[0].stem}.h5"
    if profiled.exists():
        window = config_section(read_run(profiled), "profile")
        w.page.text(f"Profiler schedule, as the article's: wait {window.get('wait')} step, warm-up "
                    f"{window.get('warmup')} step (traced and discarded), active {window.get('active')} steps "
                    "recorded, memory profiling on (every allocation and free is a [memory] event). The article "
                    "repeats that cycle twice (repeat 2); fusetrain's profiler records one cycle per run (it has no "
                    "repeat setting), so each trace holds the active steps of one cycle.")
    where = "CUDA" if cuda else "CPU"
    w.page.table("profiler traces", ["batch", "trace events", "size (KiB)", "training steps recorded",
                                     "memory events", "busiest operator (self time)", "its self time (ms)",
                                     f"{where} peak allocated by the window's operators (MiB)"],
                 [[p.stem.split("-")[1]] + trace_summary(p, cuda) for p in traces])
    w.page.text(f"The last column counts only what the recorded steps allocated while the profiler ran, on top of "
                f"what the run already held (its weights, data slice, optimizer state): the run tables' {where} peak "
                "allocated counts everything the rank held.")
    for p in traces:
        w.page.link(p, f"profiler trace at batch {p.stem.split('-')[1]}", f" ({p.name}, Chrome trace JSON)")


def accumulation(w: Writer) -> None:
    w.page.section("Gradient accumulation at a fixed effective batch")
    runs = w.sweep_table("grad_accumulation", "accumulation", ["train.accumulation_steps", "data.batch_size"])
    if runs:
        w.page.text("Every point takes optimizer steps over the same number of images (micro-batch x accumulation "
                    "steps); memory follows the micro-batch, time the number of micro-batches.")


def optimizers(w: Writer) -> None:
    w.page.section("Optimizers: SGD with momentum, Adam, RMSprop, AdamW with a one-cycle schedule")
    runs = w.sweep_table("optimizers", "optimizers", ["optimizer.name", "optimizer.lr", "scheduler.name"])
    if runs:
        w.overlay(runs, "optimizers", "each optimizer's test loss and test accuracy per epoch (dotted: train loss "
                                      "and train accuracy)")


def recipe_settings(run: Run) -> list[list]:
    """The recipe as the results file's own config states it: optimizer, schedule, epochs, augmentation."""
    opt, sched = config_section(run, "optimizer"), config_section(run, "scheduler")
    aug = config_section(run, "data", "augment")
    return [["optimizer", f"{opt.get('name')} (weight decay {opt.get('weight_decay')})"],
            ["schedule", f"{sched.get('name')} (max lr {opt.get('lr')}, rising for {sched.get('pct_start')} "
                         "of the steps)"],
            ["epochs", config_section(run, "train").get("epochs")],
            ["augmentation", ", ".join(part for on, part in (
                (aug.get("crop_padding"), f"random crop (padding {aug.get('crop_padding')})"),
                (aug.get("flip"), "horizontal flip"),
                (aug.get("brightness") or aug.get("contrast") or aug.get("saturation"),
                 f"colour jitter (brightness {aug.get('brightness')}, contrast {aug.get('contrast')}, "
                 f"saturation {aug.get('saturation')})"),
                (aug.get("rotation_degrees"), f"rotation up to {aug.get('rotation_degrees')} degrees")) if on)
             or "none"]]


def recipe(w: Writer) -> None:
    w.page.section("The first report's recipe: AdamW + one-cycle + augmentation")
    runs = w.sweep_table("adamw_recipe", "recipe", [])
    if not runs:
        return
    w.page.table("recipe settings", ["setting", "value"], recipe_settings(runs[0]))
    memory = memory_columns(runs)
    w.page.table("recipe per rank", ["run", "rank", "device"] + memory + ["train images"],
                 [[r.name, k, r.ranks["device"][k]] + memory_cells(r, memory, k) + [int(r.ranks["train_images"][k])]
                  for r in runs for k in range(len(r.ranks["device"]))])
    by_ranks = {ranks(r): r for r in runs}
    if 1 in by_ranks and 2 in by_ranks:
        w.change_table("recipe: change", [("recipe", by_ranks[1], by_ranks[2])])
    w.overlay(runs, "adamw_recipe", "the recipe on one and on two ranks: test loss and test accuracy per epoch "
                                    "(dotted: train loss and train accuracy)")


def trained_row(run: Run) -> list:
    """The images a rank really trained per epoch under the run's remainder policy, against its slice."""
    images = [int(x) for x in run.ranks["train_images"]]
    per_step = run.batch_size * accumulation_steps(run)
    trained = int(round(steps_per_epoch(run) * per_step))
    remainder = config_section(run, "data").get("remainder", "drop")
    slice_text = str(images[0]) if len(set(images)) == 1 else f"{min(images)}-{max(images)}"
    difference = trained - (min(images) if remainder == "drop" else max(images))
    effect = (f"{-difference} left out" if difference < 0 else f"{difference} repeated" if difference > 0 else
              "none: the slice divides into full batches")
    return [run.name, remainder, ranks(run), run.batch_size, slice_text, steps_text(run), trained, effect]


TRAINED_COLUMNS = ["run", "remainder", "ranks", "batch", "images per rank (slice)", "steps per epoch",
                   "images trained per rank per epoch", "left out (drop) or repeated (pad) per epoch"]


def last_batch(w: Writer) -> None:
    w.page.section("The last, smaller batch: dropped or padded")
    w.page.text("With several ranks each must take the same number of steps: `drop` skips the incomplete last "
                "batch, `pad` fills it with images repeated from the epoch's shuffle. fusetrain accepts only these "
                "two (`data.remainder: drop | pad`); it never trains a smaller last batch.")
    runs = w.sweep_table("last_batch", "last batch", ["data.remainder"])
    if runs:
        w.page.table("images each policy trained", TRAINED_COLUMNS, [trained_row(r) for r in runs])
    batchnorm_tail(w)


def batchnorm_tail(w: Writer) -> None:
    """The article's warning shown: a BatchNorm network whose rank slices leave one image over trains under
    drop and pad; trained on batches of that one image, it fails (or gives NaN)."""
    folder = w.cw.out / "last_batch_bn"
    w.page.text("The article warns that a tiny last batch under BatchNorm gives NaN or garbage: the batch's "
                "statistics of one image have no variance. Below, a network with BatchNorm after its hidden linear "
                "layer, on ranks whose slices leave one image over a multiple of the batch: `drop` and `pad` train "
                "it; without them the last step of every epoch would hold that one image, which the third run trains "
                "on from its first step (BatchNorm's statistics are each rank's own, so one rank shows what the tail "
                "does on any rank).")
    runs = [read_run(p) for p in (folder / "results" / "bn-drop.h5", folder / "results" / "bn-pad.h5") if p.exists()]
    outcome_file = folder / "batch1.txt"
    if not runs and not outcome_file.exists():
        w.page.absent("the BatchNorm runs did not run (no last_batch_bn/ folder)")
        return
    rows = [trained_row(r)[:7] + [f"{float(r.epochs['train_loss'][-1]):.4f}", f"{test_acc(r):.2f}",
                                  "trained" if np.isfinite(float(r.epochs["train_loss"][-1])) else "NaN loss"]
            for r in runs]
    if outcome_file.exists():
        outcome = outcome_file.read_text().strip()
        rows.append(["bn-batch1", "none (a batch of 1: the tail's size)", 1, 1, "-", "-", "-", "-", "-", outcome])
    w.page.table("BatchNorm and a last batch of one image", TRAINED_COLUMNS[:7] + [
        "final train loss", "test acc (%)", "outcome"], rows)


LAUNCHER_STANDS_IN = {"single": "the students' one-process script (no launcher)",
                      "mpirun": "mp.spawn (one command starts every process on this host)",
                      "srun": "torchrun (the job's launcher starts the processes and hands each its rank)"}


def launchers(w: Writer) -> None:
    w.page.section("Launchers: one process, mpirun and srun (for the students' mp.spawn and torchrun)")
    w.page.text("The students started their ranks with torch.multiprocessing's mp.spawn and with torchrun. fusetrain "
                "is one C++ program whose ranks an MPI launcher starts, so mpirun stands in for mp.spawn and srun "
                "(SLURM's launcher) for torchrun; each row trains the Q1b config.")
    table = w.cw.out / "launchers" / "launchers.tsv"
    if not table.exists():
        w.page.absent("tools/bench/launchers.sh did not run")
        return
    lines = [line.split("\t") for line in table.read_text().splitlines()[1:]]
    found = {name: w.cw.out / "launchers" / "results" / f"launch-{name}.h5" for name, *_ in lines}
    runs = {name: read_run(p) for name, p in found.items() if p.exists()}
    memory = memory_columns(list(runs.values()))
    rows = []
    for name, n, wall, status in lines:
        run = runs.get(name)
        if status != "ok" or run is None:
            rows.append([name, LAUNCHER_STANDS_IN.get(name, "-"), n] + ["not run"] * (3 + len(memory)))
            w.page.absent(f"{name}: {status}")
            continue
        rows.append([name, LAUNCHER_STANDS_IN.get(name, "-"), n, wall, sig(run.summary["train_time_s"])]
                    + memory_cells(run, memory) + [f"{test_acc(run):.2f}"])
    w.page.table("launchers", ["launcher", "stands in for", "ranks", "wall time of the command (s)",
                               "train time (s)"] + memory + ["test acc (%)"], rows)


CONV_RELU_STUDY = (("conv_relu_2_layers", 2), ("conv_relu_10_layers", 10))
CONV_RELU_IMPLEMENTATIONS = {"fused": "fused kernel", "cudnn": "cuDNN", "cudnn_disabled": "cuDNN disabled",
                             "cpu": "CPU (ATen)"}
CONV_RELU_COLUMNS = ["layers", "implementation", "device", "forward time (ms per step)",
                     "backward time (ms per step)", "train time (s)", "test acc (%)"]


def phase_ms_per_step(run: Run, phase: str) -> str:
    """A phase's seconds (mean over ranks) per optimizer step, in milliseconds."""
    steps = max(int(run.summary["optimizer_steps"]), 1)
    return sig(1e3 * float(np.mean(run.ranks[phase])) / steps)


def conv_relu_row(cw: Coursework, stem: str, layers: int, point: dict, run: Run | None) -> tuple[list, str]:
    """One point's row, and why it did not run ("" when it did); a row not run shows the device it asked for."""
    label = point["name"].split("-", 1)[-1]
    name = CONV_RELU_IMPLEMENTATIONS.get(label, label)
    if run is None:
        return ([layers, name, point["overrides"].get("train.device", "-")] + ["not run"] * 4,
                f"{layers} layers, {name}: {cw.reason(stem, point['name'])}")
    return [layers, name, device(run), phase_ms_per_step(run, "forward_s"), phase_ms_per_step(run, "backward_s"),
            sig(run.summary["train_time_s"]), f"{test_acc(run):.2f}"], ""


def conv_relu(w: Writer) -> None:
    """The fused conv+ReLU study: networks of 2 and 10 conv+ReLU layers trained with each implementation."""
    w.page.section("Fused convolution + ReLU: 2 and 10 layers")
    w.page.text("The same network of 2 and of 10 convolution + ReLU layers (configs/coursework/conv_relu_*.yaml) "
                "trained with the hand-written fused CUDA operation (its own backward: the ReLU mask applied to the "
                "incoming gradient, then the convolution gradients), with ATen on cuDNN, with ATen with cuDNN "
                "disabled, and with ATen on the CPU. Forward (with the loss) and backward time are the run's own phase "
                "times (CUDA events on a GPU, the host clock on the CPU) divided by its optimizer steps. The 10 "
                "layers are ten separate layers (not one shared layer applied ten times).")
    rows, reasons, ran = [], [], []
    for stem, layers in CONV_RELU_STUDY:
        points = w.cw.sweep(stem)
        if not points:
            reasons.append(f"sweep {stem} was not planned (no {stem}/points.tsv)")
        for p, run in points:
            row_, reason = conv_relu_row(w.cw, stem, layers, p, run)
            rows.append(row_)
            reasons += [reason] if reason else []
            ran += [(f"{layers} layers, {row_[1]}", run)] if run is not None else []
    if rows:
        w.page.table("conv+ReLU study", CONV_RELU_COLUMNS, rows)
        w.flag(ran)
    for reason in reasons:
        w.page.absent(reason)


def kernel_tables(text: str) -> tuple[str, list[str], list[list[str]]]:
    """kernels.md split: the conv+ReLU part (markdown as `fusetrain bench kernels` printed it), and the
    RGB-to-gray table's header line and rows (cells) as `fusetrain bench gray` printed them."""
    conv, _, gray = text.partition("RGB->gray")
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in gray.splitlines()
            if line.startswith("| ") and not line.startswith("| implementation")]
    return conv, ("RGB->gray" + gray).splitlines()[:1] if gray else [], rows


def times_faster(python_ms: float, ms: float) -> str:
    ratio = python_ms / ms
    return f"{sig(ratio)}x faster" if ratio >= 1 else f"{sig(1 / ratio)}x slower"


def gray_rows(rows: list[list[str]]) -> list[list[str]]:
    """Every implementation against the students' Python loop: "N x faster" (the loop itself is the reference)."""
    python = next((float(r[1]) for r in rows if r[0].startswith("Python loop") and re.match(r"^[0-9.]+$", r[1])), 0)
    out = []
    for name, ms, *_ in rows:
        if not re.match(r"^[0-9.]+$", ms):
            out.append([name, "not run", ms.replace("n/a: ", "") or "-"])
        elif name.startswith("Python loop"):
            out.append([name, ms, "the reference"])
        else:
            out.append([name, ms, times_faster(python, float(ms)) if python and float(ms) > 0 else "-"])
    return out


def kernels(w: Writer) -> None:
    text = (w.cw.out / "kernels.md").read_text() if (w.cw.out / "kernels.md").exists() else ""
    cuda = bool(re.search(r"^\| (CUDA kernel|cuDNN[^|]*|fused kernel) \| [^|]*\| [0-9.]+ \|", text, re.M))
    w.page.section("CUDA kernels: fused convolution + ReLU, RGB to gray" if cuda else
                   "Kernels on the CPU: fused convolution + ReLU, RGB to gray (the CUDA rows need a GPU)")
    if not text.strip():
        w.page.absent("`fusetrain bench kernels` and `bench gray` wrote nothing")
        return
    conv, gray_title, rows = kernel_tables(text)
    w.page.markdown_tables("conv+ReLU forward and backward", conv)
    if rows:
        w.page.table("RGB to gray against the Python loop" + (f": {gray_title[0]}" if gray_title else ""),
                     ["implementation", "time (ms)", "against the Python loop"], gray_rows(rows))
    gray_study_text(w, text)
    if "no CUDA device" in text:
        w.page.absent("the CUDA rows need a GPU: not run on this host")
    images = sorted((w.cw.out / "kernels").glob("*.png")) if (w.cw.out / "kernels").is_dir() else []
    for image in images:
        copy = w.page.out / f"kernels-{image.name}"
        copy.write_bytes(image.read_bytes())
        w.page.figure(copy, image.stem.replace("_", " "), inline=True)
    if not images:
        w.page.absent("no color/gray sample images in kernels/ (written by `fusetrain bench gray`)")


def gray_study_text(w: Writer, text: str) -> None:
    """Which images the RGB-to-gray table converted, whether they are colour, and how each row was timed."""
    match = re.search(r"RGB->gray of (\d+) images at (\d+)x\d+", text)
    if match is None:
        w.page.absent("`fusetrain bench gray` printed no table")
        return
    folder = w.cw.env.get("gray data", "the training data").split(" (")[0]
    shape = shard_shape(folder)
    colour = ("" if shape is None else
              f" They are colour images ({shape[0]}, {shape[1][2]} channels), so the samples below show colour "
              "and gray." if shape[1][2] >= 3 else
              f" {shape[0]} is a gray data set (one channel): its 'colour' samples below are gray already and the "
              "conversion only copies them; give --gray-data colour images (smoke mode takes CIFAR-10 from "
              "../shared/data when it is there).")
    w.page.text(f"RGB to gray: every row above converts the same {match[1]} images of {folder} (train split), "
                f"resized to {match[2]}x{match[2]}.{colour} The Python loop (tools/bench/gray_python_loop.py) "
                "indexes torch uint8 tensors by image, row and column as the students' loop did and runs once; the "
                "compiled versions report the median of several runs, and every result is checked to be "
                "byte-identical. The last column is the students' comparison: how many times faster than the "
                "Python loop.")


def write_all(w: Writer) -> None:
    batch_sizes(w)
    batch_limit(w)
    accumulation(w)
    optimizers(w)
    recipe(w)
    last_batch(w)
    launchers(w)
    conv_relu(w)
    kernels(w)
