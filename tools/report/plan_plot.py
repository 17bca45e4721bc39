# The plot of `fusetrain plan --json`: predicted scaling efficiency against the number of devices, one line per
# all-reduce and ranks per node; measured points beside them when a grid's measurements are given. PNG, Agg.
"""Usage: python tools/report/plan_plot.py PLAN.json [--measured MEASURED.tsv] [--out FILE.png]

PLAN.json is the file `fusetrain plan --json` writes. --measured takes a TSV with the columns devices,
efficiency (a share in [0,1]) and optionally label (tools/bench/plan_grid.sh writes one); its points are drawn
as crosses. --out defaults to PLAN.png beside the JSON file.
"""
from __future__ import annotations

import argparse
import csv
import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)


def read_plan(path: pathlib.Path) -> dict:
    plan = json.loads(path.read_text())
    if plan.get("format") != "fusetrain-plan":
        raise SystemExit(f"{path}: not a fusetrain plan file (no \"format\": \"fusetrain-plan\")")
    return plan


def lines(plan: dict) -> dict[str, list[tuple[int, float]]]:
    """Efficiency per device count, one series per all-reduce and ranks per node."""
    series: dict[str, list[tuple[int, float]]] = {}
    for row in plan["rows"]:
        name = f"{row['allreduce']}, {row['ranks_per_node']} per node"
        series.setdefault(name, []).append((row["devices"], row["efficiency"]))
    return {name: sorted(points) for name, points in series.items()}


def plot(plan: dict, measured: list[dict], out: pathlib.Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, points in lines(plan).items():
        ax.plot([d for d, _ in points], [100 * e for _, e in points], "o-", label=f"predicted: {name}")
    if measured:
        ax.plot([int(m["devices"]) for m in measured], [100 * float(m["efficiency"]) for m in measured], "x",
                color="black", markersize=8, label="measured")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("devices (nodes x ranks per node)")
    ax.set_ylabel("scaling efficiency (%)")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("predicted scaling efficiency")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("plan", type=pathlib.Path)
    parser.add_argument("--measured", type=pathlib.Path)
    parser.add_argument("--out", type=pathlib.Path)
    args = parser.parse_args()
    measured = list(csv.DictReader(args.measured.open(), delimiter="\t")) if args.measured else []
    out = args.out or args.plan.with_suffix(".png")
    plot(read_plan(args.plan), measured, out)
    print(f"plot: {out}")


if __name__ == "__main__":
    sys.exit(main())
