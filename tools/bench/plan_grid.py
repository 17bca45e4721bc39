# The predicted-against-measured table of tools/bench/plan_grid.sh: per cell (model, link rate, latency, nodes) the
# measured median step time and scaling efficiency beside the predictions made before them, and the bounds.
"""Usage: python3 tools/bench/plan_grid.py PREDICTIONS.tsv MEASURED.tsv [--started MEASURED.started]

PREDICTIONS.tsv: model, rate, delay, nodes, step_s, efficiency (and more columns), one row per cell.
MEASURED.tsv: model, rate, delay, nodes, run, step_s, images_per_s, one row per run; nodes 1 is each run's
baseline. --started: the file the measurement wrote before each block's first step, a line per predictions file
(its path beside it and its sha256), which must match, and whose rows PREDICTIONS must be.
Prints a markdown table and the bounds: step-time error at most 10% in the median over the cells and 20% in every
cell, scaling within 5 points in the median. Exits 1 when a bound fails.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import pathlib
import re
import statistics
import sys

BOUNDS = {"median step error": 0.10, "largest step error": 0.20, "median scaling difference": 5.0}


def rows(path: pathlib.Path) -> list[dict]:
    with path.open() as f:
        return list(csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"))


def cell_key(row: dict) -> tuple:
    return row["model"], row["rate"], row["delay"], int(row["nodes"])


def measured_cells(measured: list[dict]) -> dict[tuple, dict]:
    """Per cell the median step time and the median scaling, each run against its own 1-node run."""
    base = {(r["model"], r["rate"], r["delay"], r["run"]): float(r["images_per_s"]) for r in measured
            if int(r["nodes"]) == 1}
    cells: dict[tuple, dict] = {}
    for r in measured:
        n = int(r["nodes"])
        if n == 1:
            continue
        one = base[(r["model"], r["rate"], r["delay"], r["run"])]
        cell = cells.setdefault(cell_key(r), {"step_s": [], "scaling": []})
        cell["step_s"].append(float(r["step_s"]))
        cell["scaling"].append(float(r["images_per_s"]) / (n * one))
    return {k: {"step_s": statistics.median(v["step_s"]), "scaling": statistics.median(v["scaling"]),
                "runs": len(v["step_s"])} for k, v in cells.items()}


def check_order(predictions: pathlib.Path, started: pathlib.Path) -> str:
    """Every line of STARTED names a predictions file (beside it) and its sha256, written before that measurement's
    first step; the files must be unchanged, and PREDICTIONS must hold exactly their rows."""
    lines = [line for line in started.read_text().splitlines() if line.strip()]
    if not lines:
        sys.exit(f"{started} names no predictions")
    named: list[str] = []
    for line in lines:
        match = re.search(r"against (\S+) sha256 ([0-9a-f]{64})", line)
        if not match:
            sys.exit(f"{started}: not a line naming predictions and their sha256: {line}")
        path = started.parent / match[1]
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != match[2]:
            sys.exit(f"{path} (sha256 {digest}) is not the file the measurement began with: {line}")
        named += [row for row in path.read_text().splitlines()[1:] if row.strip()]
    given = [row for row in predictions.read_text().splitlines()[1:] if row.strip()]
    if sorted(given) != sorted(named):
        sys.exit(f"{predictions} does not hold exactly the rows of the predictions {started} names")
    return "\n".join(line.lstrip("# ") for line in lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("predictions", type=pathlib.Path)
    parser.add_argument("measured", type=pathlib.Path)
    parser.add_argument("--started", type=pathlib.Path)
    args = parser.parse_args()
    if args.started:
        print(check_order(args.predictions, args.started) + "\n")
    predicted = {cell_key(r): r for r in rows(args.predictions)}
    measured = measured_cells(rows(args.measured))
    print("| model | link | added latency | nodes | predicted step ms | measured step ms (median) | runs | error % | "
          "predicted scaling % | measured scaling % (median) | difference (points) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    errors, differences = [], []
    for key in sorted(measured, key=lambda k: (k[0], k[1], k[2], k[3])):
        if key not in predicted:
            sys.exit(f"no prediction for the measured cell {key}")
        p, m = predicted[key], measured[key]
        error = abs(float(p["step_s"]) - m["step_s"]) / m["step_s"]
        difference = 100 * abs(float(p["efficiency"]) - m["scaling"])
        errors.append(error)
        differences.append(difference)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {1e3 * float(p['step_s']):.1f} | {1e3 * m['step_s']:.1f} | "
              f"{m['runs']} | {100 * error:.1f} | {100 * float(p['efficiency']):.1f} | {100 * m['scaling']:.1f} | "
              f"{difference:.1f} |")
    if not errors:
        sys.exit("no measured cell with more than one node")
    figures = {"median step error": statistics.median(errors), "largest step error": max(errors),
               "median scaling difference": statistics.median(differences)}
    print()
    ok = True
    for name, value in figures.items():
        bound = BOUNDS[name]
        passed = value <= bound
        ok = ok and passed
        shown = (f"{100 * value:.1f}% (bound {100 * bound:.0f}%)" if "error" in name
                 else f"{value:.1f} points (bound {bound:.0f})")
        print(f"{'PASS' if passed else 'FAIL'} {name} over {len(errors)} cells: {shown}")
    print("grid: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
