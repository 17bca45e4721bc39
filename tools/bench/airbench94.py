# The public airbench94 (the `airbench` package, unchanged) on the project's CIFAR-10 shards, so that the
# fast recipe is compared with the reference itself, on the same card and data, in the same call.
"""Usage: python tools/bench/airbench94.py --data DIR [--airbench DIR] [--seeds N] [--seed S] [--work DIR]
                                         [--profile TRACE]

Runs airbench's own warmup94() (one untimed step of train94 in this process: cuDNN's autotuning, kernel
loading, the allocator), then train94() once per seed (Keller Jordan's airbench, PyPI package `airbench`
0.1.8; tools/gpu-host/bundle.sh carries its source), and reports each run's test accuracy, times and steps
as fusetrain's results hold them, so tools/bench/fast_cifar.sh can put it in the same table.

Only the data loading is adapted: airbench reads cifar10/train.pt and cifar10/test.pt (uint8 [N,32,32,3]
images, int64 labels, class names) from the working folder and downloads CIFAR-10 through torchvision
when they are missing. This script writes those two files from fusetrain-prep shards (train-*-of-*.h5,
test-*-of-*.h5) into --work (once: kept while the shards are the same files) and runs there, so both programs
train on the same images. Where
torchvision is not installed, the one piece of it the loader uses (transforms.Normalize on a tensor) is
supplied; nothing of the network, schedule or augmentation is touched.

Times: airbench_s is airbench's own total_time_seconds (the whitening fit, the training epochs and the
final test-time-augmented evaluation, CUDA events); train_s leaves that last evaluation out, as
fusetrain's epoch clocks and fast_cifar_pytorch.py's train_s do; epochs_s is each epoch's share of it (the
first with the whitening fit). cold_s is the cold clock: this process's start (the kernel's record, as
fusetrain's cold_s) to the end of the seed's last epoch, with Python's start, the imports, the data load,
the warm-up and the evaluations airbench runs between epochs (eval_between_s of them) in it: only the first
seed of a process is a cold process's figure, the later ones' cold_s is "-". steps is airbench's own count
of optimizer steps (train94's ceil(9.9 epochs x 48) = 476 at batch 1024). Per seed one line
    airbench94 seed=S test_acc=A train_s=T airbench_s=X cold_s=C eval_between_s=E steps=N epochs_s=E1,E2,...
then `airbench94_summary seeds=N test_acc_mean=... train_s_mean=... device_name=...`.
--prepare-only writes the two files and stops (no GPU needed).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pathlib
import statistics
import sys
import time
import types

import torch
import torch.optim.optimizer as optimizer_hooks

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from process_clock import seconds_since_process_start  # noqa: E402
from pytorch_baseline import read_split  # noqa: E402  (the shard reader the other baselines use)


def shards_identity(data: pathlib.Path) -> str:
    """The shard files of `data` by name, size and time: the same text while they are the same files."""
    files = sorted(data.glob("*-of-*.h5"))
    return "".join(f"{f.resolve()} {f.stat().st_size} {f.stat().st_mtime_ns}\n" for f in files)


def write_airbench_data(data: pathlib.Path, work: pathlib.Path) -> None:
    """cifar10/train.pt and cifar10/test.pt under `work`, in airbench's format, from the shards in `data`;
    kept when they were written from these very shard files (cifar10/source.txt)."""
    target = work / "cifar10"
    target.mkdir(parents=True, exist_ok=True)
    identity, stamp = shards_identity(data), target / "source.txt"
    if stamp.exists() and stamp.read_text() == identity and all((target / f"{s}.pt").exists() for s in ("train", "test")):
        return
    stamp.unlink(missing_ok=True)
    for split in ("train", "test"):
        part = read_split(data, split)
        if part.images.shape[1:] != (32, 32, 3) or part.classes != 10:
            raise SystemExit(f"{data}: airbench94 trains on CIFAR-10; the {split} shards hold "
                             f"{part.classes} classes of {'x'.join(map(str, part.images.shape[1:]))} images")
        blob = {"images": torch.from_numpy(part.images), "labels": torch.from_numpy(part.labels),
                "classes": [str(k) for k in range(part.classes)]}
        torch.save(blob, target / f"{split}.pt.partial")
        os.replace(target / f"{split}.pt.partial", target / f"{split}.pt")
    stamp.write_text(identity)


def provide_torchvision_normalize() -> None:
    """airbench's loader imports torchvision for transforms.Normalize alone; supply it where it is missing."""
    try:
        importlib.import_module("torchvision.transforms")
        return
    except ImportError:
        pass

    class Normalize:
        def __init__(self, mean, std):
            self.mean, self.std = mean, std

        def __call__(self, x: torch.Tensor) -> torch.Tensor:
            mean = torch.as_tensor(self.mean, dtype=x.dtype, device=x.device).view(-1, 1, 1)
            std = torch.as_tensor(self.std, dtype=x.dtype, device=x.device).view(-1, 1, 1)
            return (x - mean) / std

    transforms = types.ModuleType("torchvision.transforms")
    transforms.Normalize = Normalize
    package = types.ModuleType("torchvision")
    package.transforms = transforms
    sys.modules["torchvision"], sys.modules["torchvision.transforms"] = package, transforms


def device_seconds(work):
    """work()'s result and its seconds: CUDA events on a GPU (as airbench times itself), the host clock else."""
    if not torch.cuda.is_available():
        begin = time.perf_counter()
        return work(), time.perf_counter() - begin
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    result = work()
    end.record()
    torch.cuda.synchronize()
    return result, 1e-3 * begin.elapsed_time(end)


class RunRecorder:
    """Reads each run's figures where airbench prints them, times its evaluations and notes when each epoch
    ended (airbench evaluates right after an epoch's last step and its synchronisation), by wrapping two
    functions of airbench.utils; the training code itself is untouched."""

    def __init__(self, utils, name="airbench94", time_key="total_time_seconds", steps_key="current_steps"):
        # the names the script's print_training_details gets its figures under (airbench94_muon.py: its
        # running total is time_seconds, its step counter step)
        self.name, self.time_key, self.steps_key = name, time_key, steps_key
        self.start()
        printer, evaluate = utils.print_training_details, utils.evaluate

        def print_details(variables, is_final_entry):
            if is_final_entry:
                self.final = dict(variables)
            elif variables.get("epoch") is not None:  # an epoch's line (the warm-up's has none)
                self.epoch_totals.append(float(variables[self.time_key]))
            return printer(variables, is_final_entry)

        def timed_evaluate(model, loader, tta_level=0):
            if tta_level == 0:  # between epochs: the one just ended
                self.epoch_end_age = seconds_since_process_start()
            result, self.last_eval_s = device_seconds(lambda: evaluate(model, loader, tta_level))
            if tta_level == 0:
                self.between_s.append(self.last_eval_s)
            return result

        utils.print_training_details, utils.evaluate = print_details, timed_evaluate

    def start(self):
        """Forgets the last run's figures (before a run, and after the warm-up)."""
        self.final, self.last_eval_s, self.epoch_end_age = None, 0.0, None
        self.epoch_totals, self.between_s = [], []

    def total_s(self) -> float:
        """The last run's own total seconds (its final line's running total)."""
        return float(self.final[self.time_key])

    def figures(self, seed: int, cold: bool = True) -> str:
        """The seed's line: accuracy, times, steps and each epoch's seconds; cold_s "-" where the run is not a
        cold process's (cold False: a later run of a process that ran seeds before it)."""
        total = self.total_s()
        epochs = [b - a for a, b in zip([0.0] + self.epoch_totals, self.epoch_totals)]
        # the last epoch's evaluation came after that epoch's end: only the earlier ones lie inside cold_s
        between = sum(self.between_s[:-1])
        cold_s = f"{self.epoch_end_age:.3f}" if cold else "-"
        return (f"{self.name} seed={seed} test_acc={float(self.final['tta_val_acc']):.4f} "
                f"train_s={total - self.last_eval_s:.3f} airbench_s={total:.3f} cold_s={cold_s} "
                f"eval_between_s={between:.3f} steps={int(self.final[self.steps_key])} "
                f"epochs_s={','.join(f'{e:.4f}' for e in epochs)}")


def profiled(trace: pathlib.Path, work, wait: int = 20, warmup: int = 3, active: int = 10):
    """work() with its optimizer steps wait+1 .. wait+warmup+active under the profiler (the steps of fusetrain's
    profile row: profile.wait, .warmup, .active), the active ones written to trace as a Chrome trace for
    trace_summary.py. Steps are counted by a hook after every optimizer step, so the training code is untouched."""
    from torch.profiler import ProfilerActivity, profile, schedule
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    profiler = profile(activities=activities, schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=1),
                       on_trace_ready=lambda p: p.export_chrome_trace(str(trace)))
    hook = optimizer_hooks.register_optimizer_step_post_hook(lambda *_: profiler.step())
    try:
        with profiler:
            return work()
    finally:
        hook.remove()


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=pathlib.Path, required=True, help="fusetrain-prep CIFAR-10 shards")
    parser.add_argument("--airbench", type=pathlib.Path, help="folder holding the airbench package")
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("runs/airbench94"),
                        help="where cifar10/train.pt and test.pt are written and airbench runs")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--prepare-only", action="store_true", help="write airbench's data files and stop")
    parser.add_argument("--profile", type=pathlib.Path, metavar="TRACE",
                        help="the first seed's steps 24-33 under the profiler, as a Chrome trace (its times then "
                             "hold the profiler's cost: leave it out of timed comparisons)")
    args = parser.parse_args()
    if not args.data.is_dir():
        parser.error(f"--data {args.data}: not a folder")
    if args.seeds < 1:
        parser.error(f"--seeds must be at least 1, got {args.seeds}")
    return args


def main() -> None:
    args = parse_args()
    write_airbench_data(args.data, args.work)
    if args.prepare_only:
        print(f"airbench94 data: {args.work / 'cifar10'}")
        return
    if not torch.cuda.is_available():
        raise SystemExit("airbench94.py: airbench94 trains on a CUDA device only (none is visible)")
    if args.airbench:
        sys.path.insert(0, str(args.airbench.resolve()))
    provide_torchvision_normalize()
    airbench = importlib.import_module("airbench")
    recorder = RunRecorder(importlib.import_module("airbench.utils"))
    os.chdir(args.work)  # airbench opens cifar10/*.pt relative to the working folder
    with contextlib.redirect_stdout(sys.stderr):
        airbench.warmup94()
    results = []
    for k in range(args.seeds):
        seed = args.seed + k
        torch.manual_seed(seed)
        recorder.start()
        with contextlib.redirect_stdout(sys.stderr):  # airbench's own table, kept in the log
            if args.profile and k == 0:
                profiled(args.profile, lambda: airbench.train94(run=k))
            else:
                airbench.train94(run=k)
        total = recorder.total_s()
        results.append((seed, float(recorder.final["tta_val_acc"]), total - recorder.last_eval_s, total))
        print(recorder.figures(seed, cold=k == 0), flush=True)
    accs, times = [r[1] for r in results], [r[2] for r in results]
    print(f"airbench94_summary seeds={len(results)} test_acc_mean={statistics.fmean(accs):.4f} "
          f"test_acc_min={min(accs):.4f} test_acc_max={max(accs):.4f} train_s_mean={statistics.fmean(times):.3f} "
          f"train_s_min={min(times):.3f} train_s_max={max(times):.3f} "
          f"device_name={torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
