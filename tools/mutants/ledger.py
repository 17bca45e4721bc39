# The whole-tree baseline's verdicts kept in the repository (baseline.jsonl), so that a sitting on a fresh machine
# resumes where the last one stopped: read into the cache before a sitting, written back after each file.
"""One JSON object per line, one per source file in path order: the file's summary as baseline.py keeps it under
--dir/files (path, content digest, sample size, whether complete, when and at which commit), with its judged
mutants as rows. A row keeps its verdict, line, mutation and how it was judged, with the digest of the tests that
reached it (a survivor is judged again when that changes; the list of those tests, which only orders the new ones
first, stays in the cache). Nothing machine-specific is kept: a fresh machine rebuilds the coverage map and the
scratch copy, and takes every verdict from here."""
import json
import os
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT = HERE / "baseline.jsonl"
VERDICTS = ("invalid", "equivalent", "duplicate", "caught", "survived")
# What a row keeps (not the list of tests that reached the line: their digest, tests_key, decides a re-judgement).
ROW_FIELDS = ("key", "file", "line", "kind", "from", "to", "verdict", "stage", "by", "tests_run", "tests_key",
              "judged_s", "when")


def summary_file(cache: pathlib.Path, digest_of_path: str) -> pathlib.Path:
    """Where the cache keeps one source file's summary, named by the digest of its path."""
    return cache / "files" / f"{digest_of_path[:16]}.json"


def compact(row: dict) -> dict:
    return {k: row[k] for k in ROW_FIELDS if k in row}


def read(ledger: pathlib.Path) -> list:
    if not ledger.exists():
        return []
    out = []
    for number, line in enumerate(ledger.read_text().splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise SystemExit(f"{ledger}:{number}: not a JSON object ({e.msg})")
    return out


def restore(ledger: pathlib.Path, cache: pathlib.Path, sha) -> int:
    """Copies the ledger's summaries and verdicts into the cache where the cache has none or an older one;
    returns how many summaries were taken."""
    (cache / "files").mkdir(parents=True, exist_ok=True)
    (cache / "results").mkdir(parents=True, exist_ok=True)
    taken = 0
    for summary in read(ledger):
        target = summary_file(cache, sha(summary["path"]))
        here = json.loads(target.read_text()) if target.exists() else None
        if here is None or here.get("when", "") < summary.get("when", ""):
            target.write_text(json.dumps(summary, indent=1))
            taken += 1
        for row in (r for r in summary.get("rows", []) if "key" in r):
            result = cache / "results" / f"{row['key']}.json"
            if not result.exists():
                result.write_text(json.dumps(row, indent=1))
    return taken


def save(ledger: pathlib.Path, cache: pathlib.Path, paths: list, sha) -> None:
    """Writes the cache's summaries of `paths` (the tree's source files) to the ledger, whole or not at all."""
    lines = []
    for path in sorted(paths):
        f = summary_file(cache, sha(path))
        if f.exists():
            summary = json.loads(f.read_text())
            summary["rows"] = [compact(r) for r in summary.get("rows", [])]
            lines.append(json.dumps(summary, sort_keys=True))
    partial = ledger.with_name(ledger.name + ".partial")
    partial.write_text("".join(line + "\n" for line in lines))
    os.replace(partial, ledger)
