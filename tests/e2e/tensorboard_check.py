"""Reads fusetrain's TensorBoard event files with TensorBoard's own reader (EventAccumulator, which merges a
folder's files and drops what a restarted run logged past its restart) and checks tags, steps and values
against what the run printed, its results file, or another run's event files."""
import argparse
import math
import re
import sys

import h5py
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

STEP_TAGS = {"train/loss", "train/lr", "train/images_per_s", "train/comm_exposed_ms"}
EPOCH_TAGS = {"epoch/number", "epoch/train_loss", "epoch/train_acc", "epoch/test_loss", "epoch/test_acc",
              "epoch/lr", "epoch/time_s", "epoch/images_per_s"}
RANK_FIELDS = ("train_loss", "train_acc", "test_loss", "test_acc")
MEMORY_TAGS = {"memory/peak_mib", "memory/peak_allocated_mib"}


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def read(path):
    """Every scalar as {tag: [(step, value), ...]} and the config text, as TensorBoard reads them."""
    acc = EventAccumulator(path, size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    scalars = {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}
    texts = acc.Tensors("config") if "config" in acc.Tags()["tensors"] else []
    config = [e.tensor_proto.string_val[0].decode() for e in texts]
    if config and acc.SummaryMetadata("config").plugin_data.plugin_name != "text":
        fail(f"{path}: the config is not a text-plugin summary")
    return scalars, config


def close(what, got, want, tolerance):
    if not (math.isfinite(got) and abs(got - want) <= tolerance):
        fail(f"{what}: the event file holds {got}, expected {want} (within {tolerance})")


def printed(log_text):
    """The epoch lines and the per-rank lines the run printed, as numbers."""
    epochs = re.findall(r"^epoch +(\d+)/\d+  train loss ([\d.]+) acc +([\d.]+)%  test loss ([\d.]+) acc +([\d.]+)%"
                        r"  lr ([\d.]+)", log_text, re.M)
    ranks = re.findall(r"^Rank (\d+), Epoch \[(\d+)/\d+\], Train Loss: ([\d.]+), Train Acc: ([\d.]+)%, "
                       r"Test Loss: ([\d.]+), Test Acc: ([\d.]+)%", log_text, re.M)
    return [tuple(map(float, e)) for e in epochs], [tuple(map(float, r)) for r in ranks]


def check_epochs(scalars, epochs, steps_per_epoch):
    """epoch/* at the step that ended each epoch, equal to the epoch lines (which round)."""
    for epoch, train_loss, train_acc, test_loss, test_acc, lr in epochs:
        step = int(epoch) * steps_per_epoch
        at = {tag: dict(values).get(step) for tag, values in scalars.items()}
        for tag, want, tolerance in (("epoch/number", epoch, 0), ("epoch/train_loss", train_loss, 5e-5),
                                     ("epoch/train_acc", train_acc / 100, 5e-5), ("epoch/test_loss", test_loss, 5e-5),
                                     ("epoch/test_acc", test_acc / 100, 5e-5), ("epoch/lr", lr, 5e-6)):
            if at.get(tag) is None:
                fail(f"{tag} has no value at step {step} (epoch {int(epoch)})")
            close(f"{tag} at step {step}", at[tag], want, tolerance + 1e-6)
        for tag in MEMORY_TAGS:
            if not (at.get(tag) or 0) > 0:
                fail(f"{tag} at step {step}: {at.get(tag)}")


def check_ranks(scalars, ranks, steps_per_epoch):
    """rank<R>/* equal to the "Rank R, Epoch [...]" lines."""
    for rank, epoch, *values in ranks:
        step = int(epoch) * steps_per_epoch
        for field, want, scale in zip(RANK_FIELDS, values, (1, 100, 1, 100)):
            tag = f"rank{int(rank)}/{field}"
            got = dict(scalars.get(tag, [])).get(step)
            if got is None:
                fail(f"{tag} has no value at step {step}")
            close(f"{tag} at step {step}", got * scale, want, (5e-5 if scale == 1 else 5e-3) + 1e-5)


def check_steps(scalars, epochs, ranks, steps_per_epoch, every, resumed_at):
    """train/* at every `every`-th step of each epoch; with every 1 the mean of an epoch's per-step losses is
    rank 0's printed train loss (of the steps after `resumed_at` in the epoch a run resumed in: those its
    own figures cover), and the last step's lr the epoch's."""
    want = [e * steps_per_epoch + s for e in range(len(epochs)) for s in range(every, steps_per_epoch + 1, every)]
    for tag in STEP_TAGS:
        got = [step for step, _ in scalars[tag]]
        if got != want:
            fail(f"{tag} logged at steps {got}, expected {want}")
        if not all(math.isfinite(v) and v >= 0 for _, v in scalars[tag]):
            fail(f"{tag}: {scalars[tag]}")
    if not all(v > 0 for _, v in scalars["train/images_per_s"]):
        fail(f"train/images_per_s: {scalars['train/images_per_s']}")
    if every != 1:
        return
    loss, lr = dict(scalars["train/loss"]), dict(scalars["train/lr"])
    own = {int(epoch): train_loss for rank, epoch, train_loss, *_ in ranks if rank == 0}
    for epoch, *_, epoch_lr in epochs:
        first = (int(epoch) - 1) * steps_per_epoch
        last = first + steps_per_epoch
        first = resumed_at if first < resumed_at < last else first
        mean = sum(loss[s] for s in range(first + 1, last + 1)) / (last - first)
        close(f"mean of train/loss over epoch {int(epoch)}", mean, own[int(epoch)], 5e-5 + 1e-5)
        close(f"train/lr at the last step of epoch {int(epoch)}", lr[last], epoch_lr, 5e-6 + 1e-7)


def check_live(args):
    scalars, config = read(args.folder)
    epochs, ranks = printed(open(args.log).read())
    if len(epochs) != args.epochs or len(ranks) != args.epochs * args.ranks:
        fail(f"{len(epochs)} epoch lines and {len(ranks)} rank lines in {args.log}")
    rank_tags = {f"rank{r}/{f}" for r in range(args.ranks) for f in RANK_FIELDS}
    expected = STEP_TAGS | EPOCH_TAGS | MEMORY_TAGS | rank_tags if args.every else EPOCH_TAGS | MEMORY_TAGS | rank_tags
    if set(scalars) != expected:
        fail(f"scalar tags {sorted(scalars)}; missing {sorted(expected - set(scalars))}, "
             f"unexpected {sorted(set(scalars) - expected)}")
    check_epochs(scalars, epochs, args.steps)
    check_ranks(scalars, ranks, args.steps)
    if args.every:
        check_steps(scalars, epochs, ranks, args.steps, args.every, args.resumed_at)
    with h5py.File(args.results, "r") as f:
        stored = f["config"].asstr()[()]
    if not config or config[0] != "```yaml\n" + stored + "```\n":
        fail(f"the config text is not the results file's /config: {config[:1]}")
    print(f"{args.folder}: {len(scalars)} tags, {len(scalars.get('train/loss', []))} step points, "
          f"{len(epochs)} epochs, config {len(config)} time(s)")


def check_same(args):
    """Every scalar of `folder` (a stopped and resumed run) at the same steps and values as `like` (the straight
    run), those measuring time and memory aside, and the ranks' own train figures of the epoch resumed
    mid-way (they cover its resumed steps only: check_live compares them with the per-step losses)."""
    got, _ = read(args.folder)
    like, _ = read(args.like)
    timed = {"train/images_per_s", "train/comm_exposed_ms", "epoch/time_s", "epoch/images_per_s"} | MEMORY_TAGS
    if set(got) != set(like):
        fail(f"tags {sorted(got)} in {args.folder}, {sorted(like)} in {args.like}")
    for tag in sorted(set(got) - timed):
        steps, want = [s for s, _ in got[tag]], [s for s, _ in like[tag]]
        if steps != want:
            fail(f"{tag}: steps {steps} in {args.folder}, {want} in {args.like}")
        for (step, value), (_, reference) in zip(got[tag], like[tag]):
            if step == args.partial_epoch_end and re.match(r"rank\d+/train_", tag):
                continue
            close(f"{tag} at step {step}", value, reference, 1e-5 * max(1.0, abs(reference)))
    print(f"{args.folder}: the same tags, steps and values as {args.like}")


def check_window(args):
    """A point every `every` steps of an epoch: train/loss the mean of `like`'s per-step losses (logged every
    step) since the last point of the epoch, train/lr the step's."""
    got, _ = read(args.folder)
    like, _ = read(args.like)
    loss, lr = dict(like["train/loss"]), dict(like["train/lr"])
    epochs = len(got["epoch/number"])
    want = [e * args.steps + s for e in range(epochs) for s in range(args.every, args.steps + 1, args.every)]
    if [s for s, _ in got["train/loss"]] != want or [s for s, _ in got["train/lr"]] != want:
        fail(f"train/loss at steps {[s for s, _ in got['train/loss']]}, expected {want}")
    last = 0
    for (step, value), (_, rate) in zip(got["train/loss"], got["train/lr"]):
        start = max(last, (step - 1) // args.steps * args.steps)
        window = [loss[s] for s in range(start + 1, step + 1)]
        close(f"train/loss at step {step} (mean of steps {start + 1}-{step})", value, sum(window) / len(window), 1e-5)
        close(f"train/lr at step {step}", rate, lr[step], 1e-7)
        last = step
    print(f"{args.folder}: a point every {args.every} steps of an epoch, the mean loss since the last one")


def check_orphans(args):
    """The one file `file` holds train/loss at steps first..last: what a crashed segment logged."""
    scalars, _ = read(args.file)
    steps = [s for s, _ in scalars.get("train/loss", [])]
    if steps[-(args.last - args.first + 1):] != list(range(args.first, args.last + 1)):
        fail(f"{args.file}: train/loss at steps {steps}, expected it to end with {args.first}..{args.last}")
    print(f"{args.file}: the crashed segment's steps up to {args.last} were kept")


def check_report(args):
    """The event files `report --tensorboard` made: the live run's per-epoch tags, steps and values."""
    got, config = read(args.folder)
    live, live_config = read(args.live)
    want = {t for t in live if not t.startswith("train/")}
    if set(got) != want:
        fail(f"report tags {sorted(got)}, the live run's per-epoch tags {sorted(want)}")
    for tag in want:
        if tag.startswith("memory/"):
            last = live[tag][-1]
            if got[tag] != [(last[0], got[tag][0][1])]:
                fail(f"{tag}: {got[tag]}, expected one value at step {last[0]}")
            continue
        if [s for s, _ in got[tag]] != [s for s, _ in live[tag]]:
            fail(f"{tag}: steps {got[tag]} against the live {live[tag]}")
        for (step, value), (_, reference) in zip(got[tag], live[tag]):
            close(f"{tag} at step {step}", value, reference, 0)
    if config != live_config:
        fail("the report's config text differs from the live run's")
    print(f"{args.folder}: {len(got)} per-epoch tags as the live run logged them")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    live = sub.add_parser("live")
    for name in ("folder", "log", "results"):
        live.add_argument(name)
    for name in ("--ranks", "--steps", "--epochs", "--every"):
        live.add_argument(name, type=int, required=True)
    live.add_argument("--resumed-at", type=int, default=0)
    same = sub.add_parser("same")
    same.add_argument("folder")
    same.add_argument("like")
    same.add_argument("--partial-epoch-end", type=int, default=-1)
    window = sub.add_parser("window")
    window.add_argument("folder")
    window.add_argument("like")
    window.add_argument("--steps", type=int, required=True)
    window.add_argument("--every", type=int, required=True)
    orphans = sub.add_parser("orphans")
    orphans.add_argument("file")
    orphans.add_argument("first", type=int)
    orphans.add_argument("last", type=int)
    report = sub.add_parser("report")
    report.add_argument("folder")
    report.add_argument("live")
    args = parser.parse_args()
    {"live": check_live, "same": check_same, "window": check_window, "orphans": check_orphans,
     "report": check_report}[args.command](args)


main()
