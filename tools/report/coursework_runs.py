# The coursework folder as runs (results files, sweeps, skipped points, environment) and the writer that puts
# them on the report page: run tables with their flags, change tables, curves and utilisation charts.
"""Coursework (the folder of jobs/workstation/coursework.sh) and Writer (its blocks on a Page)."""
from __future__ import annotations

import pathlib

import h5py

import plots
from coursework_tables import (MIN_STEPS, NEAR_CHANCE, PREDICTED_COLUMNS, change_header, change_row, change_word, device,
                               flags, memory_columns, predicted_cells, rank_table_rows, ranks, run_header, run_row)
from page import Page
from results import Run, read_run, sweep_points


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

    def question_run(self, prefix: str) -> tuple[str, Run] | None:
        """The Q1a or Q1b run (results/q1a_*.h5): its name follows the device, e.g. q1a_one_gpu, q1a_one_cpu_rank."""
        found = [(k, r) for k, r in self.single.items() if k.startswith(prefix + "_")]
        return found[0] if found else None

    def launcher(self) -> str:
        """The program that started the ranks of every run: mpirun or srun."""
        words = self.env.get("launcher", "mpirun").split()
        return pathlib.Path(words[0]).name if words else "mpirun"


def shard_shape(folder: str) -> tuple[str, tuple[int, ...]] | None:
    """(data set name, image shape H x W x C) of the first training shard in `folder`, None without one."""
    shards = sorted(pathlib.Path(folder).glob("train-*.h5"))
    if not shards:
        return None
    with h5py.File(shards[0], "r") as f:
        name = f.attrs.get("dataset", b"")
        return (name.decode() if isinstance(name, bytes) else str(name)), tuple(f["images"].shape[1:])


def setting_label(key: str) -> str:
    """A swept key as a column heading: its last part, or its section for `name` keys (optimizer, scheduler)."""
    parts = key.split(".")
    return parts[-2] if parts[-1] == "name" and len(parts) > 1 else parts[-1]


class Writer:
    def __init__(self, cw: Coursework, page: Page):
        self.cw, self.page = cw, page

    def curves(self, run: Run, caption: str) -> None:
        path = self.page.out / f"{plots.file_stem(run)}-curves.png"
        self.page.figure(path, caption, plots.plot_curves(run, path))

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
        self.page.figure(path, caption, plots.plot_sweep_curves(runs, path))

    def run_table(self, name: str, named_runs: list[tuple[str, Run]], settings: list[list] | None = None,
                  setting_columns: list[str] | None = None) -> None:
        """Runs as table rows (their settings first), then the flag of every run too short to judge."""
        runs = [r for _, r in named_runs]
        header, memory = (setting_columns or []) + run_header(runs), memory_columns(runs)
        rows = [(settings[k] if settings else []) + run_row(n, r, memory) for k, (n, r) in enumerate(named_runs)]
        self.page.table(name, header, rows)
        self.flag(named_runs)

    def flag(self, named_runs: list[tuple[str, Run]]) -> None:
        """A paragraph naming every run whose numbers cannot say anything about the network, and why."""
        found = [(n, flags(r)) for n, r in named_runs if flags(r)]
        if found:
            self.page.flagged([n for n, _ in found],
                              "**Too short to judge** (its accuracy says nothing about the network; "
                              f"flagged under {MIN_STEPS} optimizer steps per epoch or within {NEAR_CHANCE} points "
                              "of chance): "
                              + "; ".join(f"{n}: {', '.join(why)}" for n, why in found) + ".")

    def change_table(self, name: str, pairs: list[tuple[str, Run, Run]], predicted: bool = False) -> None:
        """One row per (label, one-rank run, many-rank run) pair, beside the values it derives from; `predicted`
        adds what `fusetrain plan` predicted for the many-rank run from the one-rank run (OUT/plan/<run>.json)."""
        if not pairs:
            return
        header = change_header(change_word([(a, b) for _, a, b in pairs]))
        rows = [change_row(label, a, b) for label, a, b in pairs]
        if predicted:
            header += PREDICTED_COLUMNS
            rows = [row + predicted_cells(self.cw.out / "plan" / f"{a.name}.json", ranks(b))
                    for row, (_, a, b) in zip(rows, pairs)]
        self.page.table(name, header, rows)

    def rank_table(self, name: str, runs: list[Run]) -> None:
        """One row per rank of every run (the students' second table per batch size and per backend)."""
        header, rows = rank_table_rows(runs)
        if rows:
            self.page.table(name, header, rows)

    def sweep_table(self, stem: str, name: str, keys: list[str]) -> list[Run]:
        """The sweep's points with their swept settings first; skipped points keep a row with the reason."""
        points = self.cw.sweep(stem)
        if not points:
            self.page.absent(f"sweep {stem} was not planned (no {stem}/points.tsv)")
            return []
        runs = [r for _, r in points if r is not None]
        header, memory = [setting_label(k) for k in keys] + run_header(runs), memory_columns(runs)
        rows = []
        for p, run in points:
            settings = [p["overrides"].get(k, "") for k in keys]
            if run is None:
                rows.append(settings + [p["name"], p["ranks"]] + ["not run"] * (len(header) - len(keys) - 2))
                self.page.absent(f"{p['name']}: {self.cw.reason(stem, p['name'])}")
            else:
                rows.append(settings + run_row(p["name"], run, memory))
        self.page.table(name, header, rows)
        self.flag([(p["name"], r) for p, r in points if r is not None])
        return runs

    def single(self, key: str) -> Run | None:
        run = self.cw.single.get(key)
        if run is None:
            self.page.absent(f"{key}: no results file (the run did not finish)")
        return run
