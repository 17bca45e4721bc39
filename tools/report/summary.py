# One summary page for a sweep (or any set of results files): the `fusetrain report` tables (runs, ranks,
# models), where the runs came from, and the plots of plots.py, as markdown (summary.md) and HTML (summary.html).
"""Usage: python tools/report/summary.py [--out DIR] [--fusetrain BIN] [--title TEXT] RESULTS...

RESULTS are a sweep directory (runs/sweeps/NAME), .h5 results files or folders of them. DIR defaults to
<sweep>/report for a single sweep directory, else ./report. The tables come from `fusetrain report`
(the same columns as on the command line, plus the config keys that vary across the sweep), its
--per-rank rows and its --model summary of each distinct model; the binary
is --fusetrain, else $FUSETRAIN_BIN (the binary or its folder), else fusetrain on PATH, else
build/bin/fusetrain of this checkout.
"""
from __future__ import annotations

import argparse
import csv
import html
import io
import os
import pathlib
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from plots import make_plots  # noqa: E402
from results import Run, find_results, read_run  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]


def find_fusetrain(given: str | None) -> str:
    candidates = [given, os.environ.get("FUSETRAIN_BIN"), shutil.which("fusetrain"), str(REPO / "build/bin/fusetrain")]
    for candidate in filter(None, candidates):
        path = pathlib.Path(candidate)
        if path.is_dir():
            path = path / "fusetrain"
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    raise ValueError("cannot find the fusetrain binary: pass --fusetrain PATH or set FUSETRAIN_BIN")


def report_table(fusetrain: str, files: list[pathlib.Path], options: list[str]) -> tuple[str, str]:
    """`fusetrain report OPTIONS FILES` as (markdown, CSV)."""
    out = []
    for csv_option in ([], ["--csv"]):
        command = [fusetrain, "report", *options, *csv_option, *map(str, files)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise ValueError(f"{' '.join(command[:2])} failed ({done.returncode}): {done.stderr.strip()}")
        out.append(done.stdout)
    return out[0], out[1]


def tables(fusetrain: str, runs: list[Run], keys: list[str]) -> list[tuple[str, str, str]]:
    """(heading, markdown, CSV) of the runs table, the per-rank rows and each distinct model's summary."""
    files = [r.path for r in runs]
    distinct = {}
    for run in runs:
        distinct.setdefault((run.model, tuple(run.layers.get("name", [])), tuple(run.layers.get("output_shape", []))),
                            run.path)
    return [("Results", *report_table(fusetrain, files, [a for k in keys for a in ("--key", k)])),
            ("Per rank", *report_table(fusetrain, files, ["--per-rank"])),
            ("Models", *report_table(fusetrain, list(distinct.values()), ["--model"]))]


def origin_line(runs: list[Run]) -> str:
    p = runs[0].provenance
    hosts = sorted({h for r in runs for h in r.ranks["hostname"]})
    return (f"fusetrain {p.get('program_version', '?')} (commit {p.get('git_commit', '?')}), "
            f"LibTorch {p.get('torch_version', '?')}, CUDA {p.get('cuda_version', '?')}, {p.get('mpi_version', '?')}; "
            f"hosts: {', '.join(hosts)}; first run started {min(r.provenance.get('started_at', '') for r in runs)}")


def sections(runs: list[Run], images: list[pathlib.Path]) -> list[tuple[str, list[pathlib.Path]]]:
    """(heading, images) in page order: the sweep-wide plots, then each run's."""
    by_name = {i.name: i for i in images}
    out = []
    sweep = [by_name[n] for n in ("sweep-curves.png", "sweep-time.png") if n in by_name]
    if sweep:
        out.append(("All runs", sweep))
    for run in runs:
        stem = run.name.replace("/", "_")
        out.append((run.name, [by_name[f"{stem}-{kind}.png"] for kind in ("curves", "utilization", "time")
                               if f"{stem}-{kind}.png" in by_name]))
    return out


def markdown(title: str, origin: str, tables_, missing: list[str], parts, out: pathlib.Path) -> str:
    lines = [f"# {title}", "", origin, ""]
    if missing:
        lines += [f"No results yet for: {', '.join(missing)}", ""]
    for heading, table, _csv in tables_:
        lines += [f"## {heading}", "", table.rstrip(), ""]
    for heading, images in parts:
        lines += [f"## {heading}", ""] + [f"![{i.stem}]({i.relative_to(out)})" for i in images] + [""]
    return "\n".join(lines)


def html_table(table_csv: str) -> str:
    rows = list(csv.reader(io.StringIO(table_csv)))
    e = html.escape
    head = "".join(f"<th>{e(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>\n" for row in rows[1:])
    return f"<table>\n<tr>{head}</tr>\n{body}</table>"


def html_page(title: str, origin: str, tables_, missing: list[str], parts, out: pathlib.Path) -> str:
    e = html.escape
    page = [f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{e(title)}</title>",
            "<style>body{font-family:sans-serif;margin:2em} table{border-collapse:collapse}"
            " td,th{border:1px solid #bbb;padding:3px 8px;text-align:right} img{max-width:100%}</style></head><body>",
            f"<h1>{e(title)}</h1>", f"<p>{e(origin)}</p>"]
    if missing:
        page.append(f"<p>No results yet for: {e(', '.join(missing))}</p>")
    for heading, _markdown, table_csv in tables_:
        page += [f"<h2>{e(heading)}</h2>", html_table(table_csv)]
    for heading, images in parts:
        page.append(f"<h2>{e(heading)}</h2>")
        page += [f"<p><img src=\"{e(str(i.relative_to(out)))}\" alt=\"{e(i.stem)}\"></p>" for i in images]
    page.append("</body></html>\n")
    return "\n".join(page)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="a sweep directory, .h5 files or folders of .h5 files")
    parser.add_argument("--out", type=pathlib.Path, help="folder for summary.md, summary.html and the PNGs")
    parser.add_argument("--fusetrain", help="the fusetrain binary that prints the table")
    parser.add_argument("--title", help="page title (default: the sweep directory's name)")
    args = parser.parse_args()
    single = pathlib.Path(args.results[0]) if len(args.results) == 1 else None
    is_sweep = bool(single and (single / "points.tsv").exists())
    out = args.out or (single / "report" if is_sweep else pathlib.Path("report"))
    title = args.title or (f"Sweep {single.resolve().name}" if is_sweep else "fusetrain results")
    try:
        files, missing, keys = find_results(args.results)
        if not files:
            raise ValueError("no results files found")
        runs = [read_run(f) for f in files]
        page_tables = tables(find_fusetrain(args.fusetrain), runs, keys)
    except ValueError as err:
        print(f"summary.py: error: {err}", file=sys.stderr)
        return 1
    parts = sections(runs, make_plots(runs, out))
    origin = origin_line(runs)
    (out / "summary.md").write_text(markdown(title, origin, page_tables, missing, parts, out))
    (out / "summary.html").write_text(html_page(title, origin, page_tables, missing, parts, out))
    print(out / "summary.md")
    print(out / "summary.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
