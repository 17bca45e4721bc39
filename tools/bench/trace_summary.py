# Where a training step's time goes, from a profile.trace Chrome trace: wall time per step against the
# time the GPU was busy (kernels, copies, fills; overlaps counted once) and the kernels that took most.
"""Usage: python tools/bench/trace_summary.py TRACE --steps N [--top K] [--label NAME]

TRACE is the Chrome-trace JSON fusetrain writes with profile.trace (profile.active = N recorded steps).
The recorded window runs from the first event to the end of the last; per step it is that window / N.
GPU busy time is the union of the device's activity intervals (categories kernel, gpu_memcpy and
gpu_memset), so kernels overlapping on several streams count once. Prints for machines

    trace_summary label=NAME steps=N wall_ms_per_step=W gpu_busy_ms_per_step=B gpu_busy_fraction=F kernels=K

then the --top K kernels by total time (name, calls per step, ms per step, share of the busy time). A gap
between wall and busy time is the host: launches, synchronisation, Python or C++ between kernels; a CUDA
graph removes the launch part of it. A trace without device activity (a CPU run) reports busy 0.
"""
from __future__ import annotations

import argparse
import collections
import json
import pathlib
import sys

DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}


def load_events(path: pathlib.Path) -> list[dict]:
    try:
        with open(path) as f:
            trace = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise SystemExit(f"{path}: not a readable Chrome trace ({e})")
    events = trace.get("traceEvents") if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        raise SystemExit(f"{path}: no traceEvents list")
    return [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e and "dur" in e]


def union_length(intervals: list[tuple[float, float]]) -> float:
    """Total length covered by [start, end) intervals, overlaps counted once."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def summarise(events: list[dict], steps: int) -> dict:
    if not events:
        raise SystemExit("the trace holds no complete events (ph X): was profile.active reached?")
    begin = min(float(e["ts"]) for e in events)
    end = max(float(e["ts"]) + float(e["dur"]) for e in events)
    device = [e for e in events if e.get("cat") in DEVICE_CATEGORIES]
    busy_us = union_length([(float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in device])
    per_kernel: dict[str, list[float]] = collections.defaultdict(list)
    for e in device:
        per_kernel[str(e.get("name", "?"))].append(float(e["dur"]))
    return {"wall_ms": (end - begin) / 1e3 / steps, "busy_ms": busy_us / 1e3 / steps,
            "fraction": busy_us / (end - begin) if end > begin else 0.0, "kernels": per_kernel}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace", type=pathlib.Path)
    parser.add_argument("--steps", type=int, required=True, help="steps recorded (profile.active)")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    if args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")
    s = summarise(load_events(args.trace), args.steps)
    label = args.label or args.trace.stem
    print(f"trace_summary label={label} steps={args.steps} wall_ms_per_step={s['wall_ms']:.3f} "
          f"gpu_busy_ms_per_step={s['busy_ms']:.3f} gpu_busy_fraction={s['fraction']:.3f} "
          f"kernels={sum(len(v) for v in s['kernels'].values())}")
    ranked = sorted(s["kernels"].items(), key=lambda kv: -sum(kv[1]))[:args.top]
    busy = s["busy_ms"] * args.steps
    for name, durations in ranked:
        ms = sum(durations) / 1e3
        print(f"  {ms / args.steps:8.3f} ms/step  {len(durations) / args.steps:6.1f} calls/step  "
              f"{100 * ms / busy if busy else 0:5.1f}%  {name[:100]}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
