# The public airbench94_muon.py (Keller Jordan's cifar10-airbench, the Muon record) run unchanged on the project's
# CIFAR-10 shards, so that the Muon recipe is compared with its reference on the same card and data, in one call.
"""Usage: python tools/bench/airbench94_muon.py --data DIR --script FILE [--seeds N] [--seed S] [--work DIR]
                                              [--compile MODE]

Loads FILE (airbench94_muon.py from github.com/KellerJordan/cifar10-airbench, carried to a GPU host by
tools/gpu-host/bundle.sh; not part of this repository) as a module, so that its own main() trains and its file is
not edited, and does what its `__main__` block does: one warm-up run, then one run per seed (not its 200), with the
model compiled as the script compiles it (--compile max-autotune, the default; `default` or `none` to save the
compile's minutes). It reports each run's test accuracy and time as airbench94.py does, so the same tables take it.

Only the data loading is adapted, as airbench94.py adapts airbench's: the script reads cifar10/train.pt and
cifar10/test.pt from its working folder, which are written here from fusetrain-prep shards (train-*-of-*.h5,
test-*-of-*.h5) into --work, where the script then runs.

Times: airbench_s is the script's own time_seconds (the whitening fit, the training epochs and the final
test-time-augmented evaluation, CUDA events); train_s leaves that last evaluation out. cold_s is this process's
start to the end of the first seed's last epoch (the compilation and the warm-up run in it; "-" for the later
seeds, which share the process as the script's own runs do, since each process compiles anew). Per seed one
line, as airbench94.py's:
    airbench94_muon seed=S test_acc=A train_s=T airbench_s=X cold_s=C eval_between_s=E steps=N epochs_s=...
then `airbench94_muon_summary seeds=N test_acc_mean=... train_s_mean=... device_name=...`.
--prepare-only writes the data files and stops (no GPU needed).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import pathlib
import statistics
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from airbench94 import RunRecorder, provide_torchvision_normalize, write_airbench_data  # noqa: E402


def load_script(path: pathlib.Path):
    """The script as a module named airbench94_muon: its definitions run, its __main__ block does not."""
    spec = importlib.util.spec_from_file_location("airbench94_muon", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("CifarNet", "main", "evaluate", "print_training_details"):
        if not hasattr(module, name):
            raise SystemExit(f"{path}: no {name}; is this airbench94_muon.py from KellerJordan/cifar10-airbench?")
    return module


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=pathlib.Path, required=True, help="fusetrain-prep CIFAR-10 shards")
    parser.add_argument("--script", type=pathlib.Path, help="airbench94_muon.py (required unless --prepare-only)")
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("runs/airbench94_muon"),
                        help="where cifar10/train.pt and test.pt are written and the script runs")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compile", choices=("max-autotune", "default", "none"), default="max-autotune",
                        help="how the model is compiled (the script's own: max-autotune)")
    parser.add_argument("--prepare-only", action="store_true", help="write the script's data files and stop")
    args = parser.parse_args()
    if not args.data.is_dir():
        parser.error(f"--data {args.data}: not a folder")
    if args.seeds < 1:
        parser.error(f"--seeds must be at least 1, got {args.seeds}")
    if not args.prepare_only and (args.script is None or not args.script.is_file()):
        parser.error(f"--script {args.script}: not a file (airbench94_muon.py from KellerJordan/cifar10-airbench)")
    return args


def main() -> None:
    args = parse_args()
    write_airbench_data(args.data, args.work)
    if args.prepare_only:
        print(f"airbench94_muon data: {args.work / 'cifar10'}")
        return
    if not torch.cuda.is_available():
        raise SystemExit("airbench94_muon.py: the script trains on a CUDA device only (none is visible)")
    script = args.script.resolve()
    sys.argv[0] = str(script)  # the script reads its own source through sys.argv[0], as when run directly
    provide_torchvision_normalize()
    os.chdir(args.work)  # the script opens cifar10/*.pt relative to the working folder
    muon = load_script(script)
    recorder = RunRecorder(muon, name="airbench94_muon", time_key="time_seconds", steps_key="step")
    model = muon.CifarNet().cuda().to(memory_format=torch.channels_last)
    if args.compile != "none":
        model.compile(mode=args.compile)
    with contextlib.redirect_stdout(sys.stderr):  # the script's own table, kept in the log
        muon.print_columns(muon.logging_columns_list, is_head=True)
        muon.main("warmup", model)
    results = []
    for k in range(args.seeds):
        seed = args.seed + k
        torch.manual_seed(seed)
        recorder.start()
        with contextlib.redirect_stdout(sys.stderr):
            accuracy = float(muon.main(k, model))
        total = recorder.total_s()
        results.append((seed, accuracy, total - recorder.last_eval_s, total))
        print(recorder.figures(seed, cold=k == 0), flush=True)
    accs, times = [r[1] for r in results], [r[2] for r in results]
    print(f"airbench94_muon_summary seeds={len(results)} test_acc_mean={statistics.fmean(accs):.4f} "
          f"test_acc_min={min(accs):.4f} test_acc_max={max(accs):.4f} train_s_mean={statistics.fmean(times):.3f} "
          f"train_s_min={min(times):.3f} train_s_max={max(times):.3f} compile={args.compile} "
          f"device_name={torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
