# The coursework report: reads the folder written by jobs/workstation/coursework.sh (results, sweeps,
# launcher times, kernel benchmarks, skipped points) and writes one page per the assignment's questions.
"""Usage: python tools/report/coursework.py OUT

OUT is the folder of jobs/workstation/coursework.sh. Writes OUT/report/coursework.md, coursework.html,
contents.json (every section with its tables and figures, for the tests) and the PNGs they show.
A part that could not run on the host (NCCL or fp16 without GPUs, srun without SLURM) is named with
the reason instead of being left out.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys

import numpy as np
import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import plots  # noqa: E402
from page import Page  # noqa: E402
from results import Run, read_run, sweep_points  # noqa: E402

MIB = 1024.0 ** 2
COLUMNS = ["run", "ranks", "device", "batch", "epochs", "train time (s)", "total time (s)", "memory (MiB)",
           "train acc (%)", "test acc (%)"]


class Coursework:
    """The runs of one coursework folder, by experiment."""

    def __init__(self, out: pathlib.Path):
        self.out = out
        self.single = {p.stem: read_run(p) for p in sorted((out / "results").glob("*.h5"))}
        self.skipped: dict[str, list[tuple[str, str]]] = {}
        for line in (out / "skipped.tsv").read_text().splitlines()[1:]:
            stem, point, reason = line.split("\t")
            self.skipped.setdefault(stem, []).append((point, reason))
        self.env = dict(line.split("\t", 1) for line in (out / "environment.tsv").read_text().splitlines())

    def sweep(self, stem: str) -> list[tuple[dict, Run | None]]:
        directory = self.out / "sweeps" / stem
        if not (directory / "points.tsv").exists():
            return []
        return [(p, read_run(p["results"]) if p["results"].exists() else None) for p in sweep_points(directory)]

    def reason(self, stem: str, point: str) -> str:
        return dict(self.skipped.get(stem, [])).get(point, "no results file (the run did not finish)")


def ranks(run: Run) -> int:
    return int(run.provenance.get("world_size", 1))


def device(run: Run) -> str:
    return ", ".join(sorted(set(run.ranks["device"])))


def config_section(run: Run, *keys: str) -> dict:
    """A section of the run's resolved config (e.g. "data", "augment"), {} where it or a part is absent."""
    section = yaml.safe_load(run.config) or {}
    for key in keys:
        section = section.get(key) or {}
    return section


def accumulation_steps(run: Run) -> int:
    train = config_section(run, "train")
    return int(train.get("accumulation_steps", 1))


def batch(run: Run) -> str:
    """Images per rank per micro-batch, and the global batch of one optimizer step (x ranks x accumulation)."""
    steps = accumulation_steps(run)
    detail = f", {steps} accumulation steps" if steps > 1 else ""
    return f"local {run.batch_size} (global {run.batch_size * ranks(run) * steps}{detail})"


def memory_mib(run: Run) -> float:
    return float(np.max(run.ranks["peak_memory_bytes"])) / MIB


def last_train_acc(run: Run) -> float:
    return 100 * float(run.epochs["train_acc"][-1])


def row(name: str, run: Run) -> list:
    s = run.summary
    return [name, ranks(run), device(run), batch(run), len(run.epochs["epoch"]), f"{s['train_time_s']:.1f}",
            f"{s['wall_time_s']:.1f}", f"{memory_mib(run):.0f}", f"{last_train_acc(run):.2f}",
            f"{100 * s['final_test_acc']:.2f}"]


def rank_seconds(run: Run, r: int) -> float:
    """Rank r's training seconds: compute, waiting for communication and loading data (evaluation left out)."""
    return sum(float(run.ranks[c][r]) for c in plots.CATEGORIES["compute"] + ("comm_wait_s", "data_s"))


OWN_COLUMNS = (("train_loss", "own train loss", 1), ("train_acc", "own train acc (%)", 100),
               ("test_loss", "own test loss", 1), ("test_acc", "own test acc (%)", 100))


def rank_rows(run: Run) -> tuple[list[str], list[list]]:
    """Per-rank rows: time split, memory, images, and each rank's own loss/accuracy (train, then its slice of the
    test split) when recorded."""
    own = [(c, h, scale) for c, h, scale in OWN_COLUMNS if c in run.ranks]
    header = ["rank", "host", "device", "time (s)", "forward (s)", "backward (s)", "comm wait (s)", "data (s)",
              "memory (MiB)", "train images"] + [h for _, h, _ in own]
    rows = []
    for r in range(len(run.ranks["hostname"])):
        seconds = rank_seconds(run, r)
        rows.append([r, run.ranks["hostname"][r], run.ranks["device"][r], f"{seconds:.1f}",
                     f"{float(run.ranks['forward_s'][r]):.1f}", f"{float(run.ranks['backward_s'][r]):.1f}",
                     f"{float(run.ranks['comm_wait_s'][r]):.1f}", f"{float(run.ranks['data_s'][r]):.1f}",
                     f"{float(run.ranks['peak_memory_bytes'][r]) / MIB:.0f}", int(run.ranks["train_images"][r])]
                    + [f"{scale * float(run.ranks[c][r]):.4f}" if scale == 1 else
                       f"{scale * float(run.ranks[c][r]):.2f}" for c, _, scale in own])
    return header, rows


CHANGE_COLUMNS = ["pair", "ranks", "speed-up", "scaling efficiency (%)", "train time change (%)",
                  "memory change (%)"]


def change_row(name: str, one: Run, many: Run) -> list:
    """Many ranks against one, as the students computed by hand: speed-up of training time, that speed-up per
    added rank (efficiency), and the percentage change of training time and of peak memory per rank."""
    t1, tn = one.summary["train_time_s"], max(many.summary["train_time_s"], 1e-9)
    m1, mn = max(memory_mib(one), 1e-9), memory_mib(many)
    speedup = t1 / tn
    return [name, f"{ranks(one)} -> {ranks(many)}", f"{speedup:.2f}x",
            f"{100 * speedup * ranks(one) / ranks(many):.1f}", f"{100 * (tn - t1) / t1:+.1f}",
            f"{100 * (mn - m1) / m1:+.1f}"]


def log_line(epoch: int, n: int, train_loss: float, train_acc: float, test: tuple[float, float] | None) -> str:
    """One epoch in the students' format; `test` (loss, accuracy) is None for an epoch that was not evaluated."""
    line = f"Epoch [{epoch}/{n}], Train Loss: {train_loss:.4f}, Train Acc: {100 * train_acc:.2f}%"
    return line if test is None else f"{line}, Test Loss: {test[0]:.4f}, Test Acc: {100 * test[1]:.2f}%"


def rank_lines(run: Run, epoch: int, n: int) -> list[str]:
    """Every rank's own line of an evaluated epoch (its batches, its slice of the test split), in rank order."""
    own = {c: np.asarray(v, dtype=float) for c, v in run.rank_epochs.items()}
    return [f"Rank {int(own['rank'][i])}, " + log_line(epoch, n, own["train_loss"][i], own["train_acc"][i],
                                                      (own["test_loss"][i], own["test_acc"][i]))
            for i in np.flatnonzero(own["epoch"] == epoch)]


def epoch_log(run: Run) -> str:
    """The per-epoch log: on several ranks every rank's own line and then the line over all ranks; on one rank
    the one line."""
    e = run.epochs
    n = len(e["epoch"])
    lines = []
    for k, epoch in enumerate(int(x) for x in e["epoch"]):
        test = (float(e["test_loss"][k]), float(e["test_acc"][k])) if e["evaluated"][k] else None
        if ranks(run) > 1:
            lines += rank_lines(run, epoch, n)
        prefix = "All ranks, " if ranks(run) > 1 else ""
        lines.append(prefix + log_line(epoch, n, float(e["train_loss"][k]), float(e["train_acc"][k]), test))
    return "\n".join(lines)


RANK_TABLE_COLUMNS = ["run", "batch", "rank", "time (s)", "memory (MiB)", "own test acc (%)"]


def rank_table(w: Writer, name: str, runs: list[Run]) -> None:
    """One row per rank of every run: its training seconds, peak memory and accuracy on its own slice of the
    test split (the students' second table per batch size and per backend)."""
    rows = [[run.name, batch(run), r, f"{rank_seconds(run, r):.1f}",
             f"{float(run.ranks['peak_memory_bytes'][r]) / MIB:.0f}", f"{100 * float(run.ranks['test_acc'][r]):.2f}"]
            for run in runs for r in range(len(run.ranks["hostname"]))]
    if rows:
        w.page.table(name, RANK_TABLE_COLUMNS, rows)


def overfit_verdict(run: Run) -> str:
    """From the run's own numbers: the overfitting flag (test loss rising while train loss falls) and
    the gap between train and test accuracy at the end."""
    gap = last_train_acc(run) - 100 * run.summary["final_test_acc"]
    ev = plots.evaluated(run)
    test_loss = run.epochs["test_loss"][ev]
    best = int(run.epochs["epoch"][ev][int(np.argmin(test_loss))])
    if run.summary.get("overfit"):
        return (f"overfits: test loss rose while train loss fell from epoch {run.summary['overfit_epoch']} "
                f"(lowest test loss at epoch {best}); train accuracy ends {gap:.1f} points above test accuracy")
    return (f"no overfitting detected: test loss was lowest at epoch {best} of {len(test_loss)} and did not "
            f"rise for the window while train loss fell; train-test accuracy gap {gap:.1f} points")


def setting_label(key: str) -> str:
    """A swept key as a column heading: its last part, or its section for `name` keys (optimizer, scheduler)."""
    parts = key.split(".")
    return parts[-2] if parts[-1] == "name" and len(parts) > 1 else parts[-1]


class Writer:
    def __init__(self, cw: Coursework, page: Page):
        self.cw, self.page = cw, page

    def curves(self, run: Run, caption: str) -> None:
        path = self.page.out / f"{plots.file_stem(run)}-curves.png"
        plots.plot_curves(run, path)
        self.page.figure(path, caption)

    def rank_time(self, run: Run) -> None:
        path = self.page.out / f"{plots.file_stem(run)}-time.png"
        plots.plot_rank_time(run, path)
        self.page.figure(path, f"{run.name}: seconds per rank")

    def utilisation(self, runs: list[Run]) -> None:
        drawn = 0
        for run in runs:
            path = self.page.out / f"{plots.file_stem(run)}-utilization.png"
            if plots.plot_utilization(run, path):
                self.page.figure(path, f"{run.name}: GPU utilisation")
                drawn += 1
        if not drawn:
            self.page.absent("GPU utilisation is sampled through NVML on GPUs; these runs used "
                             f"{', '.join(sorted({device(r) for r in runs}))}, so there is no utilisation chart")

    def overlay(self, runs: list[Run], stem: str, caption: str) -> None:
        path = self.page.out / f"{stem}-curves.png"
        plots.plot_sweep_curves(runs, path)
        self.page.figure(path, caption)

    def sweep_table(self, stem: str, name: str, keys: list[str]) -> list[Run]:
        """The sweep's points with their swept settings first; skipped points keep a row with the reason."""
        points = self.cw.sweep(stem)
        if not points:
            self.page.absent(f"sweep {stem} was not planned (no {stem}/points.tsv)")
            return []
        rows, runs = [], []
        for p, run in points:
            settings = [p["overrides"].get(k, "") for k in keys]
            if run is None:
                rows.append(settings + [p["name"], p["ranks"]] + ["not run"] * (len(COLUMNS) - 2))
                self.page.absent(f"{p['name']}: {self.cw.reason(stem, p['name'])}")
            else:
                rows.append(settings + row(p["name"], run))
                runs.append(run)
        self.page.table(name, [setting_label(k) for k in keys] + COLUMNS, rows)
        return runs

    def single(self, key: str) -> Run | None:
        run = self.cw.single.get(key)
        if run is None:
            self.page.absent(f"{key}: no results file (the run did not finish)")
        return run


def q1(w: Writer) -> tuple[Run | None, Run | None]:
    page, found = w.page, []
    for key, title, gpus in (("q1a_one_gpu", "Q1a: the network on one rank", "one rank"),
                             ("q1b_two_gpus", "Q1b: the same network data-parallel on two ranks", "two ranks")):
        page.section(title)
        run = w.single(key)
        found.append(run)
        if run is None:
            continue
        if key == "q1a_one_gpu":
            page.text("Network structure (`simple_cnn` is three "
                      "3x3 convolution + ReLU + 2x2 max-pool stages of 32, 64 and 128 channels, a 256-unit "
                      "hidden layer and the classifier):")
            page.table("network structure", ["layer", "output shape", "parameters"], model_rows(run))
        page.text(f"Trained on {gpus} ({device(run)}), {batch(run)}; the training data is split between "
                  "ranks and every rank starts from rank 0's weights." if ranks(run) > 1 else
                  f"Trained on {gpus} ({device(run)}), {batch(run)}.")
        page.table(f"{key} run", COLUMNS, [row(key, run)])
        header, rows = rank_rows(run)
        page.table(f"{key} per rank", header, rows)
        page.pre(epoch_log(run))
        w.curves(run, f"{key}: train and test loss and accuracy per epoch")
        w.rank_time(run)
        w.utilisation([run])
    return found[0], found[1]


def model_rows(run: Run) -> list[list]:
    """The model summary the results file stores (/model): layer, output shape for one image, parameters,
    and the total, as `fusetrain report --model` prints it."""
    layers = run.layers
    rows = [[name, shape, int(n)] for name, shape, n in zip(layers["name"], layers["output_shape"], layers["parameters"])]
    return rows + [["total", "-", int(np.sum(layers["parameters"]))]]


def q1c(w: Writer, one: Run | None, two: Run | None) -> None:
    w.page.section("Q1c: one rank against two")
    if one is None or two is None:
        w.page.absent("Q1a or Q1b has no results")
        return
    w.page.table("one vs two", COLUMNS, [row("one rank", one), row("two ranks", two)])
    w.page.table("one vs two: change", CHANGE_COLUMNS, [change_row("Q1a -> Q1b", one, two)])
    speedup = one.summary["train_time_s"] / max(two.summary["train_time_s"], 1e-9)
    w.page.text(f"Two ranks trained {speedup:.2f}x as fast as one ({two.summary['train_time_s']:.1f} s against "
                f"{one.summary['train_time_s']:.1f} s): each rank processes half the images per epoch but waits "
                f"{float(np.mean(two.ranks['comm_wait_s'])):.1f} s on gradient all-reduces, and with the same "
                f"local batch the global batch doubles ({batch(two)}), so there are half as many optimizer steps. "
                f"Final test accuracy: {100 * one.summary['final_test_acc']:.2f}% on one, "
                f"{100 * two.summary['final_test_acc']:.2f}% on two.")
    w.overlay([one, two], "q1c", "Q1a and Q1b: test loss (train loss dotted) and test accuracy per epoch")


def q2a(w: Writer, one: Run | None, two: Run | None) -> None:
    w.page.section("Q2a: overfitting")
    w.page.text("A network overfits when its training loss keeps falling while the loss on held-out data rises "
                "(and train accuracy pulls away from test accuracy). fusetrain flags it when the test loss rose "
                "while the train loss fell for `regularization.overfit_window` epochs. Remedies: more data or "
                "augmentation, dropout, weight decay, label smoothing, early stopping, a smaller network.")
    runs = [(k, r) for k, r in (("Q1a", one), ("Q1b", two), ("overfitting study", w.single("q2a_overfitting")))
            if r is not None]
    w.page.table("verdicts", ["run", "epochs", "final train loss", "final test loss", "train acc (%)", "test acc (%)",
                              "verdict"],
                 [[k, len(r.epochs["epoch"]), f"{r.epochs['train_loss'][-1]:.4f}", f"{r.summary['final_test_loss']:.4f}",
                   f"{last_train_acc(r):.2f}", f"{100 * r.summary['final_test_acc']:.2f}", overfit_verdict(r)]
                  for k, r in runs])
    study = w.cw.single.get("q2a_overfitting")
    if study is not None:
        w.page.text(study_settings(study))
        w.curves(study, "overfitting study (few training images, no regularization): loss and accuracy per epoch")


def study_settings(run: Run) -> str:
    """The overfitting study's size and optimizer as its results file's config states them."""
    data, opt = config_section(run, "data"), config_section(run, "optimizer")
    return (f"The overfitting study: {int(run.ranks['train_images'][0])} training images, batch "
            f"{data.get('batch_size')}, {opt.get('name')} at lr {opt.get('lr')}, {len(run.epochs['epoch'])} epochs, "
            f"dropout {config_section(run, 'model').get('dropout')}, weight decay {opt.get('weight_decay')}.")


def q2b(w: Writer) -> None:
    w.page.section("Q2b: mixed precision (the Q1b network on two ranks)")
    w.page.text("fp16 halves memory traffic and uses tensor cores, but its narrow range underflows small "
                "gradients (hence dynamic loss scaling) and overflows large activations; bf16 keeps fp32's range "
                "with less precision. Some operations (reductions, softmax, loss) stay in fp32. On a CPU host bf16 "
                "autocasts on the CPU (fast where the CPU has AVX512-BF16 or AMX, see the environment's bf16 unit); "
                "fp16 needs a GPU.")
    runs = {r.precision: r for r in w.sweep_table("q2b_precision", "precision", ["precision.dtype"])}
    fp32 = runs.get("fp32")
    for other in ("fp16", "bf16"):
        if fp32 is not None and other in runs:
            r = runs[other]
            w.page.text(f"{other} against fp32: {fp32.summary['train_time_s'] / max(r.summary['train_time_s'], 1e-9):.2f}x "
                        f"the speed, {memory_mib(r) / max(memory_mib(fp32), 1e-9):.2f}x the memory, test accuracy "
                        f"{100 * r.summary['final_test_acc']:.2f}% against {100 * fp32.summary['final_test_acc']:.2f}%.")
    if runs:
        w.overlay(list(runs.values()), "q2b", "fp32, fp16 and bf16: test loss and accuracy per epoch")


def q2c(w: Writer) -> None:
    w.page.section("Q2c: regularization added to the Q1b model")
    w.page.text("Techniques: weight decay (penalises large weights, smoother functions), dropout (no unit can rely "
                "on another: an ensemble of thinned networks), data augmentation (more, varied data), label "
                "smoothing (no over-confident logits), early stopping (stop before the test loss rises), batch "
                "normalization (noise from batch statistics). Here: none, dropout + weight decay, augmentation "
                "(random crop and flip), label smoothing.")
    runs = w.sweep_table("q2c_regularization", "regularization",
                         ["model.dropout", "optimizer.weight_decay", "data.augment.crop_padding", "data.augment.flip",
                          "regularization.label_smoothing"])
    if runs:
        w.page.table("regularization verdicts", ["run", "verdict"], [[r.name, overfit_verdict(r)] for r in runs])
        w.overlay(runs, "q2c", "each regularizer's test loss (train loss dotted) and test accuracy per epoch")


def q2d(w: Writer) -> None:
    w.page.section("Q2d: communication backends, NCCL against Gloo")
    w.page.text("NCCL all-reduces GPU buffers directly over NVLink/PCIe/InfiniBand; Gloo runs on CPU memory over "
                "TCP (GPU gradients are staged through the host); MPI uses the MPI library's collectives. NCCL is "
                "the choice on GPUs, Gloo or MPI on CPUs.")
    runs = w.sweep_table("q2d_backends", "backends", ["data.batch_size", "distributed.backend"])
    by = {(r.batch_size, r.provenance.get("backend", "")): r for r in runs}
    for b in (32, 128):
        nccl, gloo = by.get((b, "nccl")), by.get((b, "gloo"))
        if nccl is not None and gloo is not None:
            w.page.text(f"Batch {b}: NCCL trained in {nccl.summary['train_time_s']:.1f} s, Gloo in "
                        f"{gloo.summary['train_time_s']:.1f} s ({gloo.summary['train_time_s'] / max(nccl.summary['train_time_s'], 1e-9):.2f}x).")
    rows = [[r.name, r.provenance.get("backend", ""), r.batch_size,
             f"{float(np.mean(r.ranks['comm_wait_s'])):.2f}", f"{float(np.mean(r.ranks['allreduce_s'])):.2f}",
             f"{float(np.mean(r.ranks['allreduce_bytes'])) / MIB:.1f}"] for r in runs]
    if rows:
        w.page.table("backend communication", ["run", "backend", "batch", "comm wait (s)", "all-reduce (s)",
                                               "all-reduced (MiB)"], rows)
    rank_table(w, "backends per rank", runs)
    if runs:
        w.utilisation(runs)


def batch_sizes(w: Writer) -> None:
    w.page.section("Batch size 16 / 32 / 64 / 128 on one and two ranks")
    runs = w.sweep_table("batch_size", "batch size", ["data.batch_size"])
    if not runs:
        return
    path = w.page.out / "batch_size-throughput.png"
    fig, (speed, memory) = plots.plt.subplots(1, 2, figsize=(10, 4))
    for n in sorted({ranks(r) for r in runs}):
        mine = sorted((r for r in runs if ranks(r) == n), key=lambda r: r.batch_size)
        sizes = [r.batch_size for r in mine]
        speed.plot(sizes, [r.summary["images_per_s"] for r in mine], "o-", label=f"{n} rank(s)")
        memory.plot(sizes, [memory_mib(r) for r in mine], "o-", label=f"{n} rank(s)")
    speed.set(xscale="log", xlabel="batch per rank", ylabel="images/s", title="throughput")
    memory.set(xscale="log", xlabel="batch per rank", ylabel="peak memory (MiB)", title="memory")
    for ax in (speed, memory):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plots.plt.close(fig)
    w.page.figure(path, "throughput and peak memory per batch size")
    pairs = [(b, [r for r in runs if r.batch_size == b]) for b in sorted({r.batch_size for r in runs})]
    rows = [change_row(f"batch {b}", min(group, key=ranks), max(group, key=ranks)) for b, group in pairs
            if len({ranks(r) for r in group}) > 1]
    if rows:
        w.page.table("one vs two ranks per batch size: change", CHANGE_COLUMNS, rows)
    rank_table(w, "batch size per rank", runs)
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


def trace_summary(path: pathlib.Path) -> list:
    """One Chrome trace in figures: events, size, the busiest operator by self time, peak allocated memory."""
    events = json.loads(path.read_text()).get("traceEvents", [])
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
    busiest = max(own, key=own.get) if own else "-"
    allocated = [e["args"].get("Total Allocated", 0) for e in events if e.get("name") == "[memory]" and "args" in e]
    return [len(events), f"{path.stat().st_size / 1024:.0f}", busiest, f"{own.get(busiest, 0) / 1000:.1f}",
            f"{max(allocated, default=0) / MIB:.1f}"]


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
    w.page.text(source.read_text().splitlines()[0])
    w.page.table("batch limit", ["batch", "images/s", "peak memory (MiB)", "utilisation (%)"], rows)
    w.page.text(verdict)
    w.page.text("A short Q1a training run at the smallest and at the largest of these batches with the operator "
                "profiler on (`profile.wait`/`warmup`/`active` steps; operators, input shapes and memory) writes a "
                "Chrome trace: open it in chrome://tracing or https://ui.perfetto.dev (Open trace file).")
    traces = sorted((w.cw.out / "profiles").glob("batch-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    for reason in (r for stem, r in w.cw.skipped.get("batch_limit", [])):
        w.page.absent(reason)
    if not traces:
        w.page.absent("no profiler trace in profiles/ (the profiled runs did not finish)")
        return
    profiled = w.cw.out / "profiles" / f"{traces[0].stem}.h5"
    if profiled.exists():
        window = config_section(read_run(profiled), "profile")
        w.page.text(f"Profiler window: {window.get('wait')} step(s) waited, {window.get('warmup')} warm-up step(s) "
                    f"traced and discarded, {window.get('active')} step(s) recorded.")
    w.page.table("profiler traces", ["batch", "trace events", "size (KiB)", "busiest operator (self time)",
                                     "its self time (ms)", "peak allocated in the window (MiB)"],
                 [[p.stem.split("-")[1]] + trace_summary(p) for p in traces])
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
        w.overlay(runs, "optimizers", "each optimizer's test loss (train loss dotted) and test accuracy per epoch")


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
    w.page.table("recipe per rank", ["run", "rank", "device", "memory (MiB)", "train images"],
                 [[r.name, k, r.ranks["device"][k], f"{float(r.ranks['peak_memory_bytes'][k]) / MIB:.0f}",
                   int(r.ranks["train_images"][k])] for r in runs for k in range(len(r.ranks["device"]))])
    by_ranks = {ranks(r): r for r in runs}
    if 1 in by_ranks and 2 in by_ranks:
        w.page.table("recipe: change", CHANGE_COLUMNS, [change_row("recipe", by_ranks[1], by_ranks[2])])
    w.overlay(runs, "adamw_recipe", "the recipe on one and on two ranks: test loss (train loss dotted) and test "
                                    "accuracy per epoch")


def last_batch(w: Writer) -> None:
    w.page.section("The last, smaller batch: dropped or padded")
    w.page.text("With several ranks each must take the same number of steps: `drop` skips the incomplete last "
                "batch, `pad` fills it with repeated images.")
    runs = w.sweep_table("last_batch", "last batch", ["data.remainder"])
    if runs:
        w.page.table("steps", ["run", "optimizer steps", "train images per rank"],
                     [[r.name, int(r.summary["optimizer_steps"]), int(np.max(r.ranks["train_images"]))] for r in runs])


def launchers(w: Writer) -> None:
    w.page.section("Launchers: one process, mpirun and srun")
    table = w.cw.out / "launchers" / "launchers.tsv"
    if not table.exists():
        w.page.absent("tools/bench/launchers.sh did not run")
        return
    rows = []
    for line in table.read_text().splitlines()[1:]:
        name, n, wall, status = line.split("\t")
        run_path = w.cw.out / "launchers" / "results" / f"launch-{name}.h5"
        if status != "ok" or not run_path.exists():
            rows.append([name, n, "not run", "not run", "not run", "not run"])
            w.page.absent(f"{name}: {status}")
            continue
        run = read_run(run_path)
        rows.append([name, n, wall, f"{run.summary['train_time_s']:.1f}", f"{memory_mib(run):.0f}",
                     f"{100 * run.summary['final_test_acc']:.2f}"])
    w.page.table("launchers", ["launcher", "ranks", "wall time of the command (s)", "train time (s)",
                               "memory per rank (MiB)", "test acc (%)"], rows)


CONV_RELU_STUDY = (("conv_relu_2_layers", 2), ("conv_relu_10_layers", 10))
CONV_RELU_IMPLEMENTATIONS = {"fused": "fused kernel", "cudnn": "cuDNN", "cudnn_disabled": "cuDNN disabled",
                             "cpu": "CPU (ATen)"}
CONV_RELU_COLUMNS = ["layers", "implementation", "device", "forward time (ms per step)",
                     "backward time (ms per step)", "train time (s)", "test acc (%)"]


def phase_ms_per_step(run: Run, phase: str) -> str:
    """A phase's seconds (mean over ranks) per optimizer step, in milliseconds."""
    steps = max(int(run.summary["optimizer_steps"]), 1)
    return f"{1e3 * float(np.mean(run.ranks[phase])) / steps:.2f}"


def conv_relu_row(cw: Coursework, stem: str, layers: int, point: dict, run: Run | None) -> tuple[list, str]:
    """One point's row, and why it did not run ("" when it did); a row not run shows the device it asked for."""
    label = point["name"].split("-", 1)[-1]
    name = CONV_RELU_IMPLEMENTATIONS.get(label, label)
    if run is None:
        return ([layers, name, point["overrides"].get("train.device", "-")] + ["not run"] * 4,
                f"{layers} layers, {name}: {cw.reason(stem, point['name'])}")
    return [layers, name, device(run), phase_ms_per_step(run, "forward_s"), phase_ms_per_step(run, "backward_s"),
            f"{run.summary['train_time_s']:.1f}", f"{100 * run.summary['final_test_acc']:.2f}"], ""


def conv_relu(w: Writer) -> None:
    """The fused conv+ReLU study: networks of 2 and 10 conv+ReLU layers trained with each implementation."""
    w.page.section("Fused convolution + ReLU: 2 and 10 layers")
    w.page.text("The same network of 2 and of 10 convolution + ReLU layers (configs/coursework/conv_relu_*.yaml) "
                "trained with the hand-written fused CUDA operation (its own backward: the ReLU mask applied to the "
                "incoming gradient, then the convolution gradients), with ATen on cuDNN, with ATen with cuDNN "
                "disabled, and with ATen on the CPU. Forward (with the loss) and backward time are the run's own phase "
                "times (CUDA events on a GPU, the host clock on the CPU) divided by its optimizer steps. The 10 "
                "layers are ten separate layers (not one shared layer applied ten times).")
    rows, reasons = [], []
    for stem, layers in CONV_RELU_STUDY:
        points = w.cw.sweep(stem)
        if not points:
            reasons.append(f"sweep {stem} was not planned (no {stem}/points.tsv)")
        for row_, reason in (conv_relu_row(w.cw, stem, layers, p, run) for p, run in points):
            rows.append(row_)
            reasons += [reason] if reason else []
    if rows:
        w.page.table("conv+ReLU study", CONV_RELU_COLUMNS, rows)
    for reason in reasons:
        w.page.absent(reason)


def kernels(w: Writer) -> None:
    w.page.section("CUDA kernels: fused convolution + ReLU, RGB to gray")
    text = (w.cw.out / "kernels.md").read_text() if (w.cw.out / "kernels.md").exists() else ""
    if not text.strip():
        w.page.absent("`fusetrain bench kernels` and `bench gray` wrote nothing")
        return
    w.page.markdown_tables("kernels", text)
    gray_study_text(w, text)
    if "no CUDA device" in text:
        w.page.absent("the CUDA rows need a GPU: not run on this host")
    images = sorted((w.cw.out / "kernels").glob("*.png")) if (w.cw.out / "kernels").is_dir() else []
    for image in images:
        copy = w.page.out / f"kernels-{image.name}"
        copy.write_bytes(image.read_bytes())
        w.page.figure(copy, image.stem)
    if not images:
        w.page.absent("no color/gray sample images in kernels/ (written by `fusetrain bench gray`)")


def gray_study_text(w: Writer, text: str) -> None:
    """Which images the RGB-to-gray table converted: every row, the Python loop's too, timed on the same ones."""
    match = re.search(r"RGB->gray of (\d+) images at (\d+)x\d+", text)
    if match is None:
        w.page.absent("`fusetrain bench gray` printed no table")
        return
    data = w.cw.env.get("gray data", "the training data")
    w.page.text(f"RGB to gray: every row above converts the same {match[1]} images of {data}, resized to "
                f"{match[2]}x{match[2]}. The Python loop (tools/bench/gray_python_loop.py) indexes torch uint8 "
                "tensors by image, row and column as the students' loop did and runs once; the compiled versions "
                "report the median of several runs, and every result is checked to be byte-identical.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=pathlib.Path, help="the folder of jobs/workstation/coursework.sh")
    args = parser.parse_args()
    cw = Coursework(args.out)
    page = Page("The coursework, reproduced with fusetrain", args.out / "report")
    page.out.mkdir(parents=True, exist_ok=True)
    w = Writer(cw, page)
    page.section("Environment")
    page.table("environment", ["item", "value"], [[k, v] for k, v in cw.env.items()])
    one, two = q1(w)
    q1c(w, one, two)
    q2a(w, one, two)
    q2b(w)
    q2c(w)
    q2d(w)
    batch_sizes(w)
    batch_limit(w)
    accumulation(w)
    optimizers(w)
    recipe(w)
    last_batch(w)
    launchers(w)
    conv_relu(w)
    kernels(w)
    for path in page.write("coursework"):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
