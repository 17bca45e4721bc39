# The coursework report: reads the folder written by jobs/workstation/coursework.sh (results, sweeps,
# launcher times, kernel benchmarks, skipped points) and writes one page per the assignment's questions.
"""Usage: python tools/report/coursework.py OUT

OUT is the folder of jobs/workstation/coursework.sh. Writes OUT/report/coursework.md, coursework.html,
contents.json (every section with its tables, their cells, and its figures, for the tests) and the PNGs they
show. The page opens with what was run (data set, images per split, epochs, device, ranks, smoke or full).
A part that could not run on the host (NCCL or fp16 without GPUs, srun without SLURM) is named with the
reason instead of being left out; headings and run names say the device and launcher actually used.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import coursework_studies as studies  # noqa: E402
import plots  # noqa: E402
from coursework_runs import Coursework, Writer, shard_shape  # noqa: E402
from coursework_tables import (MEMORY_MEANING, batch, config_section, device, last_train_acc, on_gpu,  # noqa: E402
                               rank_rows, ranks, sig, test_acc, training_memory)
from page import Page  # noqa: E402
from results import Run  # noqa: E402

STANDS_IN_FOR = {"mpirun": "the students' mp.spawn", "srun": "the students' torchrun"}


def launcher_words(cw: Coursework) -> str:
    name = cw.launcher()
    return f"{name} (standing in for {STANDS_IN_FOR[name]})" if name in STANDS_IN_FOR else name


def rank_words(cw: Coursework, run: Run) -> str:
    """What the run's ranks ran on, in the assignment's terms: one GPU, two GPUs, two ranks sharing one GPU,
    or CPU processes (each standing in for a GPU)."""
    n = ranks(run)
    count = {1: "one", 2: "two"}.get(n, str(n))
    if not on_gpu(run):
        return f"{count} CPU process{'es' if n > 1 else ''}"
    gpus = int(cw.env.get("gpus", n) or n)
    return f"{count} GPU{'s' if n > 1 else ''}" if gpus >= n else f"{count} ranks sharing {gpus} GPU(s)"


def stand_in(run: Run) -> str:
    """", each standing in for a GPU" on the CPU, "" on GPUs."""
    return "" if on_gpu(run) else (", standing in for one GPU" if ranks(run) == 1 else ", each standing in for a GPU")


def overview(w: Writer, one: Run | None) -> None:
    """What was run, before any number: mode, data set, images per split, epochs, device, ranks, launcher."""
    page, cw = w.page, w.cw
    page.section("What was run")
    smoke = cw.env.get("mode") == "smoke"
    shape = shard_shape(cw.env.get("data", ""))
    data = (f"{shape[0]}, {'x'.join(map(str, shape[1][:2]))} pixels, {shape[1][2]} channel(s), from "
            f"{cw.env.get('data')}" if shape else cw.env.get("data", "-"))
    study = cw.single.get("q2a_overfitting")
    rows = [["mode", "smoke: a small cut of the data on the CPU (coursework.sh --smoke)" if smoke else
             "full: the configs of configs/coursework as written (coursework.sh --full)"], ["data set", data]]
    if one is not None:
        train, test = int(np.sum(one.ranks["train_images"])), int(np.sum(one.ranks["test_images"]))
        epochs = len(one.epochs["epoch"])
        rows += [["images per split", f"{train} training, {test} test"
                  + (f" (the overfitting study: {int(study.ranks['train_images'][0])} training)" if study else "")],
                 ["epochs", f"{epochs}" + (f" (the overfitting study: {len(study.epochs['epoch'])})" if study else "")],
                 ["device", f"{device(one)}; GPUs on this host: {cw.env.get('gpus', '?')}"],
                 ["ranks", f"1 and 2 per experiment (one process each), started by {launcher_words(cw)}"]]
        summary = (f"**Smoke mode: these numbers test the pipeline, not the network.** Every experiment ran end to "
                   f"end on {train} training images for {epochs} epochs on the CPU, so the accuracies say nothing "
                   "about the network on CIFAR-10 and the times are seconds of CPU cores the ranks share; "
                   "`coursework.sh --full` on GPUs gives numbers to set beside the students' reports." if smoke else
                   f"**Full mode:** {train} training and {test} test images, {epochs} epochs on {device(one)}.")
    else:
        summary = "Q1a has no results: the scale of the runs is unknown."
    page.table("what was run", ["item", "value"], rows)
    page.text(summary)


def q1(w: Writer) -> tuple[Run | None, Run | None]:
    page, found = w.page, []
    for prefix, label in (("q1a", "Q1a: the network on"), ("q1b", "Q1b: the same network data-parallel on")):
        named = w.cw.question_run(prefix)
        if named is None:
            page.section(f"{label} {'one rank' if prefix == 'q1a' else 'two ranks'}")
            page.absent(f"{prefix}: no results file (the run did not finish)")
            found.append(None)
            continue
        key, run = named
        found.append(run)
        page.section(f"{label} {rank_words(w.cw, run)}{stand_in(run)}")
        if prefix == "q1a":
            page.text("Network structure (`simple_cnn` is three 3x3 convolution + ReLU + 2x2 max-pool stages of 32, "
                      "64 and 128 channels, a 256-unit hidden layer and the classifier):")
            page.table("network structure", ["layer", "output shape", "parameters"], model_rows(run))
            page.text(MEMORY_MEANING)
        split = ("; the training data is split between ranks and every rank starts from rank 0's weights"
                 if ranks(run) > 1 else "")
        page.text(f"Trained on {rank_words(w.cw, run)} ({device(run)}){stand_in(run)}; {batch(run)}; started by "
                  f"{launcher_words(w.cw)}{split}.")
        w.run_table(f"{key}: the run", [(key, run)])
        header, rows = rank_rows(run)
        page.table(f"{key}: per rank", header, rows)
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


def q1c(w: Writer, one: Run | None, two: Run | None) -> None:
    w.page.section("Q1c: one rank against two")
    if one is None or two is None:
        w.page.absent("Q1a or Q1b has no results")
        return
    w.run_table("Q1a and Q1b", [(one.name, one), (two.name, two)])
    w.change_table("Q1a against Q1b: change", [("Q1a -> Q1b", one, two)])
    t1, t2 = float(sig(one.summary["train_time_s"])), float(sig(two.summary["train_time_s"]))
    word, _ = training_memory(two)
    w.page.text(f"Two ranks trained {t1 / t2:.2f}x as fast as one ({sig(t2)} s against {sig(t1)} s): each rank "
                f"processes half the images per epoch but waits {sig(float(np.mean(two.ranks['comm_wait_s'])))} s on "
                f"gradient all-reduces, and with the same local batch the global batch doubles ({batch(two)}), so "
                "there are half as many optimizer steps. The memory compared is the "
                f"{word}: per rank it holds the same weights, gradients and optimizer state and the same local "
                f"batch's activations, with half the data slice. Final test accuracy: {test_acc(one):.2f}% on one, "
                f"{test_acc(two):.2f}% on two.")
    w.overlay([one, two], "q1c", "Q1a and Q1b: test loss and accuracy per epoch (dotted: train loss and accuracy)")


def q1_reproducible(w: Writer) -> None:
    """Q1a against Q1b with distributed.reproducible: whether one rank and two end with the same weights, by
    the SHA-256 digests the results files keep per epoch."""
    w.page.section("Q1c, reproducibly: one rank against two with the same bits")
    one, two = w.cw.single.get("q1r_one_rank"), w.cw.single.get("q1r_two_ranks")
    if one is None or two is None:
        w.page.absent("q1r_one_rank or q1r_two_ranks has no results")
        return
    a, b = one.epochs["weights_digest"][-1], two.epochs["weights_digest"][-1]
    verdict = ("agree: the two runs hold the same weights, bit for bit" if a == b else
               "differ: the two runs do not hold the same weights")
    micro = int(config_section(one, "distributed").get("micro_batches", 2))
    size = int(config_section(one, "data").get("batch_size", 0))
    w.page.text(f"The Q1 networks trained again with `distributed.reproducible` (each step {micro} micro-batches of "
                f"{size} images, {micro * size} in all, in one global order, their gradients summed exactly): the "
                "weights' SHA-256 after "
                f"the last epoch is {a[:16]}... on one rank and {b[:16]}... on two, which {verdict}. Final test "
                f"accuracy: {test_acc(one):.2f}% on one rank, {test_acc(two):.2f}% on two. So in Q1c the accuracy "
                "that differs between one rank and two comes from what changes with the ranks there (the global "
                "batch, the number of optimizer steps, the order of the data), not from the distribution itself.")
    w.run_table("reproducible Q1a and Q1b", [(one.name, one), (two.name, two)])


def accuracy_gap(run: Run) -> str:
    """Which accuracy ended higher, train or test, and by how many points (from the two printed values)."""
    train, test = float(f"{last_train_acc(run):.2f}"), float(f"{test_acc(run):.2f}")
    if train == test:
        return "train and test accuracy end equal"
    return f"train accuracy ends {abs(train - test):.2f} points {'above' if train > test else 'below'} test accuracy"


def overfit_verdict(run: Run) -> str:
    """From the run's own numbers: the overfitting flag (test loss rising while train loss falls for the window),
    "too few epochs to judge" when the run has fewer evaluated epochs than the flag needs, and the accuracy gap."""
    window = int(config_section(run, "regularization").get("overfit_window", 3))
    ev = plots.evaluated(run)
    test_loss = run.epochs["test_loss"][ev]
    best = int(run.epochs["epoch"][ev][int(np.argmin(test_loss))]) if len(test_loss) else 0
    if run.summary.get("overfit"):
        return (f"overfits: test loss rose while train loss fell from epoch {run.summary['overfit_epoch']} "
                f"(lowest test loss at epoch {best}); {accuracy_gap(run)}")
    if len(test_loss) < window + 1:
        return (f"too few epochs to judge (window {window}): the flag needs {window + 1} evaluated epochs, the run "
                f"has {len(test_loss)}; {accuracy_gap(run)}")
    return (f"no overfitting detected: test loss was lowest at epoch {best} of {len(test_loss)} and did not rise "
            f"for {window} epochs while train loss fell; {accuracy_gap(run)}")


def q2a(w: Writer, one: Run | None, two: Run | None) -> None:
    w.page.section("Q2a: overfitting")
    w.page.text("A network overfits when its training loss keeps falling while the loss on held-out data rises "
                "(and train accuracy pulls away from test accuracy). fusetrain flags it when the test loss rose "
                "while the train loss fell for `regularization.overfit_window` epochs. Remedies: more data or "
                "augmentation, dropout, weight decay, label smoothing, early stopping, a smaller network.")
    runs = [(k, r) for k, r in (("Q1a", one), ("Q1b", two), ("overfitting study", w.single("q2a_overfitting")))
            if r is not None]
    w.page.table("overfitting verdicts", ["run", "epochs", "final train loss", "final test loss", "train acc (%)",
                                          "test acc (%)", "verdict"],
                 [[k, len(r.epochs["epoch"]), f"{r.epochs['train_loss'][-1]:.4f}", f"{r.summary['final_test_loss']:.4f}",
                   f"{last_train_acc(r):.2f}", f"{test_acc(r):.2f}", overfit_verdict(r)] for k, r in runs])
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
            t32, t = float(sig(fp32.summary["train_time_s"])), float(sig(r.summary["train_time_s"]))
            word, m = training_memory(r)
            m32 = training_memory(fp32)[1]
            memory = f"{word} {sig(m)} MiB against {sig(m32)} MiB, " if m is not None and m32 is not None else ""
            w.page.text(f"{other} against fp32: {t32 / t:.2f}x the speed ({sig(t)} s against {sig(t32)} s), "
                        f"{memory}test accuracy {test_acc(r):.2f}% against {test_acc(fp32):.2f}%.")
    if runs:
        w.overlay(list(runs.values()), "q2b", "fp32, fp16 and bf16: test loss and accuracy per epoch (dotted: train)")


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
        w.overlay(runs, "q2c", "each regularizer's test loss and test accuracy per epoch (dotted: train loss and "
                               "train accuracy)")


BACKENDS = {"nccl": "NCCL", "gloo": "Gloo", "mpi": "MPI"}


def q2d_title(cw: Coursework) -> str:
    """The backends the table really compares, and the ones this host could not run."""
    points = cw.sweep("q2d_backends")
    ran = [b for b in BACKENDS if any(r is not None and p["overrides"].get("distributed.backend") == b
                                      for p, r in points)]
    missing = [BACKENDS[b] for b in BACKENDS if b not in ran and any(
        p["overrides"].get("distributed.backend") == b for p, _ in points)]
    title = "Q2d: communication backends, " + (" against ".join(BACKENDS[b] for b in ran) or "none ran")
    return title + (f" ({', '.join(missing)} not run on this host)" if missing else "")


def q2d(w: Writer) -> None:
    w.page.section(q2d_title(w.cw))
    w.page.text("NCCL all-reduces GPU buffers directly over NVLink/PCIe/InfiniBand; Gloo runs on CPU memory over "
                "TCP (GPU gradients are staged through the host); MPI uses the MPI library's collectives. NCCL is "
                "the choice on GPUs, Gloo or MPI on CPUs.")
    runs = w.sweep_table("q2d_backends", "backends", ["data.batch_size", "distributed.backend"])
    for b in sorted({r.batch_size for r in runs}):
        mine = [r for r in runs if r.batch_size == b]
        if len(mine) > 1:
            times = [(BACKENDS.get(r.provenance.get("backend", ""), "?"), float(sig(r.summary["train_time_s"])))
                     for r in mine]
            fastest = min(times, key=lambda t: t[1])
            w.page.text(f"Batch {b}: " + ", ".join(f"{name} {sig(t)} s" for name, t in times)
                        + f"; {fastest[0]} fastest, " + ", ".join(f"{name} {t / fastest[1]:.2f}x its time"
                                                                  for name, t in times if name != fastest[0]) + ".")
    rows = [[r.name, r.provenance.get("backend", ""), r.batch_size, sig(float(np.mean(r.ranks["comm_wait_s"]))),
             sig(float(np.mean(r.ranks["allreduce_s"]))), sig(float(np.mean(r.ranks["allreduce_bytes"])) / 2 ** 20)]
            for r in runs]
    if rows:
        w.page.table("backend communication", ["run", "backend", "batch", "comm wait (s)", "all-reduce (s)",
                                               "all-reduced (MiB)"], rows)
    w.rank_table("backends per rank", runs)
    if runs:
        w.utilisation(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=pathlib.Path, help="the folder of jobs/workstation/coursework.sh")
    args = parser.parse_args()
    cw = Coursework(args.out)
    page = Page("The coursework, reproduced with fusetrain", args.out / "report")
    page.out.mkdir(parents=True, exist_ok=True)
    w = Writer(cw, page)
    q1a = cw.question_run("q1a")
    overview(w, q1a[1] if q1a else None)
    page.section("Environment")
    page.table("environment", ["item", "value"], [[k, v] for k, v in cw.env.items()])
    one, two = q1(w)
    q1c(w, one, two)
    q1_reproducible(w)
    q2a(w, one, two)
    q2b(w)
    q2c(w)
    q2d(w)
    studies.write_all(w)
    for path in page.write("coursework"):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
