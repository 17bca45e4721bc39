# Plots of fusetrain results files: per run the loss/accuracy curves, GPU utilization and the per-rank
# time split; across runs (a sweep) overlaid curves and the time split of each run; the confusion matrix of
# an evaluation file as a heat map. PNG, matplotlib Agg.
"""Usage: python tools/report/plots.py [--out DIR] RESULTS...
       python tools/report/plots.py --confusion EVALUATION.h5 [--confusion ...] [--out DIR | --out FILE.png]

RESULTS are .h5 results files, sweep directories (runs/sweeps/NAME, read through points.tsv) or folders
of .h5 files. DIR defaults to <sweep>/report for a single sweep directory, else ./plots. Writes:

  <run>-curves.png       train and test loss and accuracy per epoch
  <run>-utilization.png  GPU utilization over time, one line per rank (only when the run sampled any)
  <run>-time.png         seconds per rank, stacked: compute (forward + backward + optimizer),
                         communication (comm_wait), data, eval
  sweep-curves.png       test loss and accuracy of every run, overlaid, train loss and accuracy dotted
                         (two or more runs)
  sweep-time.png         the same time split for every run, averaged over its ranks (two or more runs)

With --confusion, EVALUATION.h5 files written by `fusetrain evaluate` instead: <stem>-confusion.png, a heat
map of each true class's share predicted as each class (rows: true class, columns: predicted), with the
counts written in the cells. --out FILE.png names the file when there is one evaluation.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.ticker import MaxNLocator  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from results import Evaluation, Run, find_results, read_evaluation, read_run  # noqa: E402

CATEGORIES = {  # shown name -> /ranks columns summed into it
    "compute": ("forward_s", "backward_s", "optimizer_s"),
    "communication": ("comm_wait_s",),
    "data": ("data_s",),
    "eval": ("eval_s",),
}


def file_stem(run: Run) -> str:
    return run.name.replace("/", "_")


def time_split(run: Run) -> dict:
    """Category -> seconds per rank."""
    return {c: sum(np.asarray(run.ranks[col], dtype=float) for col in cols) for c, cols in CATEGORIES.items()}


def evaluated(run: Run) -> np.ndarray:
    return np.asarray(run.epochs["evaluated"], dtype=bool)


def drawn_series(**axes) -> dict:
    """Panel name -> the kinds of curve drawn on it (each curve's gid: "train" or "test"), read back from the
    axes, so that a report can say (and a test check) what a figure shows."""
    return {name: sorted({line.get_gid() for line in ax.get_lines() if line.get_gid() and len(line.get_xdata())})
            for name, ax in axes.items()}


def plot_curves(run: Run, path: pathlib.Path) -> dict:
    epoch, ev = run.epochs["epoch"], evaluated(run)
    fig, (loss, acc) = plt.subplots(1, 2, figsize=(10, 4))
    loss.plot(epoch, run.epochs["train_loss"], "o-", label="train", gid="train")
    loss.plot(epoch[ev], run.epochs["test_loss"][ev], "s-", label="test", gid="test")
    acc.plot(epoch, 100 * run.epochs["train_acc"], "o-", label="train", gid="train")
    acc.plot(epoch[ev], 100 * run.epochs["test_acc"][ev], "s-", label="test", gid="test")
    if run.summary.get("overfit"):
        for ax in (loss, acc):
            ax.axvline(run.summary["overfit_epoch"], color="red", linestyle=":", label="overfitting from")
    loss.set(xlabel="epoch", ylabel="loss", title="loss")
    acc.set(xlabel="epoch", ylabel="accuracy (%)", title="accuracy")
    for ax in (loss, acc):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(f"{run.name}: {run.model} on {run.dataset}, {run.provenance.get('world_size', 1)} rank(s), "
                 f"batch {run.batch_size}, {run.precision}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return drawn_series(loss=loss, accuracy=acc)


def plot_utilization(run: Run, path: pathlib.Path) -> bool:
    u = run.utilization
    if len(u.get("time_s", [])) == 0:
        return False
    fig, ax = plt.subplots(figsize=(8, 4))
    for rank in np.unique(u["rank"]):
        mine = u["rank"] == rank
        ax.plot(u["time_s"][mine], u["gpu_percent"][mine], label=f"rank {rank} GPU")
        ax.plot(u["time_s"][mine], u["memory_percent"][mine], linestyle="--", label=f"rank {rank} memory")
    ax.set(xlabel="time (s)", ylabel="utilization (%)", ylim=(0, 105), title=f"{run.name}\nGPU utilization")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def stacked_bars(ax, labels, split: dict) -> None:
    bottom = np.zeros(len(labels))
    for category, seconds in split.items():
        ax.bar(labels, seconds, bottom=bottom, label=category)
        bottom += seconds
    ax.set_ylabel("seconds")
    ax.grid(alpha=0.3, axis="y")
    ax.legend()


def plot_rank_time(run: Run, path: pathlib.Path) -> None:
    split = time_split(run)
    labels = [f"rank {r}\n{host}" for r, host in enumerate(run.ranks["hostname"])]
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(labels) + 2), 4))
    stacked_bars(ax, labels, split)
    ax.set_title(f"{run.name}\nseconds per rank", fontsize="medium")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_sweep_curves(runs: list[Run], path: pathlib.Path) -> dict:
    """Every run's test loss and test accuracy (solid, squares) with its train loss and train accuracy (dotted,
    same colour); returns the series drawn per panel."""
    fig, (loss, acc) = plt.subplots(1, 2, figsize=(12, 4.5))
    for run in runs:
        ev = evaluated(run)
        epoch = run.epochs["epoch"][ev]
        line, = loss.plot(epoch, run.epochs["test_loss"][ev], "s-", label=run.name, gid="test")
        loss.plot(run.epochs["epoch"], run.epochs["train_loss"], ":", color=line.get_color(), gid="train")
        acc.plot(epoch, 100 * run.epochs["test_acc"][ev], "s-", color=line.get_color(), label=run.name, gid="test")
        acc.plot(run.epochs["epoch"], 100 * run.epochs["train_acc"], ":", color=line.get_color(), gid="train")
    loss.set(xlabel="epoch", ylabel="loss", title="test loss (dotted: train loss)")
    acc.set(xlabel="epoch", ylabel="accuracy (%)", title="test accuracy (dotted: train accuracy)")
    for ax in (loss, acc):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    acc.legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return drawn_series(loss=loss, accuracy=acc)


def plot_sweep_time(runs: list[Run], path: pathlib.Path) -> None:
    split = {c: np.array([time_split(r)[c].mean() for r in runs]) for c in CATEGORIES}
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(runs) + 3), 5))
    stacked_bars(ax, [r.name for r in runs], split)
    ax.set_title("time per rank (mean over ranks)")
    ax.tick_params(axis="x", labelrotation=60)
    plt.setp(ax.get_xticklabels(), ha="right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def make_plots(runs: list[Run], out: pathlib.Path) -> list[pathlib.Path]:
    """Writes every plot of `runs` into `out`; returns the PNG paths in the order written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if len(runs) > 1:
        plot_sweep_curves(runs, out / "sweep-curves.png")
        plot_sweep_time(runs, out / "sweep-time.png")
        written += [out / "sweep-curves.png", out / "sweep-time.png"]
    for run in runs:
        stem = file_stem(run)
        plot_curves(run, out / f"{stem}-curves.png")
        written.append(out / f"{stem}-curves.png")
        if plot_utilization(run, out / f"{stem}-utilization.png"):
            written.append(out / f"{stem}-utilization.png")
        plot_rank_time(run, out / f"{stem}-time.png")
        written.append(out / f"{stem}-time.png")
    return written


def plot_confusion(evaluation: Evaluation, path: pathlib.Path) -> None:
    counts = evaluation.confusion
    names = evaluation.classes["class_names"]
    shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    size = max(5.0, 0.6 * len(names) + 2)
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    image = ax.imshow(shares, cmap="Blues", vmin=0.0, vmax=1.0)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="share of the true class")
    ticks = np.arange(len(names))
    ax.set_xticks(ticks, names, rotation=45, ha="right")
    ax.set_yticks(ticks, names)
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    if len(names) <= 30:
        for t in range(len(names)):
            for p in range(len(names)):
                ax.text(p, t, str(counts[t, p]), ha="center", va="center", fontsize=8,
                        color="white" if shares[t, p] > 0.5 else "black")
    s = evaluation.summary
    ax.set_title(f"{s['split']}: accuracy {100 * s['top1']:.2f}% over {s['images']} images")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def confusion_plots(files: list[str], out: pathlib.Path | None) -> list[pathlib.Path]:
    """Heat maps of evaluation files: into `out` as a folder, or as `out` itself when it names one .png."""
    evaluations = [read_evaluation(f) for f in files]
    if out is not None and out.suffix == ".png":
        if len(evaluations) != 1:
            raise ValueError(f"--out {out} names one file but {len(evaluations)} evaluations were given")
        targets = [out]
    else:
        folder = out or pathlib.Path("plots")
        targets = [folder / f"{e.path.stem}-confusion.png" for e in evaluations]
    for evaluation, target in zip(evaluations, targets):
        target.parent.mkdir(parents=True, exist_ok=True)
        plot_confusion(evaluation, target)
    return targets


def default_out(arguments: list[str]) -> pathlib.Path:
    only = pathlib.Path(arguments[0]) if len(arguments) == 1 else None
    return only / "report" if only and (only / "points.tsv").exists() else pathlib.Path("plots")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="*", help=".h5 files, sweep directories or folders of .h5 files")
    parser.add_argument("--out", type=pathlib.Path,
                        help="output folder for the PNG files (with --confusion: or FILE.png)")
    parser.add_argument("--confusion", action="append", metavar="EVALUATION.h5",
                        help="heat map of an evaluation file's confusion matrix (repeatable)")
    args = parser.parse_args()
    if args.confusion:
        try:
            written = confusion_plots(args.confusion, args.out)
        except ValueError as e:
            print(f"plots.py: error: {e}", file=sys.stderr)
            return 1
        print("\n".join(str(p) for p in written))
        return 0
    if not args.results:
        parser.error("give results files, sweep directories or folders, or --confusion EVALUATION.h5")
    try:
        files, missing, _ = find_results(args.results)
        runs = [read_run(f) for f in files]
    except ValueError as e:
        print(f"plots.py: error: {e}", file=sys.stderr)
        return 1
    if missing:
        print(f"plots.py: no results yet for {len(missing)} point(s): {', '.join(missing)}", file=sys.stderr)
    if not runs:
        print("plots.py: error: no results files found", file=sys.stderr)
        return 1
    for path in make_plots(runs, args.out or default_out(args.results)):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
