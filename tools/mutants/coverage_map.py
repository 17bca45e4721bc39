#!/usr/bin/env python3
# Per-test line coverage of the source tree, for the mutation baseline: one gcov-instrumented build, each ctest
# test run with its own GCOV_PREFIX, gcov's JSON read into which tests execute which lines of which file.
"""Which tests reach which source lines (see tests/README.md, "Whole-tree baseline").

The instrumented copy lives in --dir/coverage (tree/ and tree/build, like the mutant scratch copies): the project
built with --coverage at -Og (unity batches as usual, CUDA off). Each ctest test of the chosen labels runs alone
(two at a time) with GCOV_PREFIX set to a folder of its own, so the counts its processes leave (every rank of an
MPI test, every command a script runs) are its own; gcov then reads them, and the test's record keeps, per source
file, the file's content digest and the lines that ran. Tests that lock a test cluster are left out; tests that
share another ctest RESOURCE_LOCK (a data folder) never run at once. Records are kept per test under
--dir/coverage/tests and keyed by the test's own files (its GoogleTest file, its script's folder, its binary's
sources, tests/common): a later sitting runs only the tests that are new or whose files changed. A source file that
changed since a record was made is read through a line mapping of its old text to the new one (difflib); a changed
line counts as reached by a test that ran the unchanged lines around it.

Limits: a process that ends by a signal or _exit writes no counts (a killed rank's lines are missed); a line
gcov does not instrument (a declaration, a statement's continuation) counts as reached by the tests that ran
its function, or, outside any function, any line of its file; covering(loose=True) also counts so a line gcov
instruments but never saw run (at -Og a continuation line can be one), for the baseline's second look.

    python3 tools/mutants/coverage_map.py --update          # build, run what is missing, print a summary
    python3 tools/mutants/coverage_map.py --query src/history/history.cpp:29
"""
import argparse
import bisect
import concurrent.futures
import contextlib
import difflib
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import run_mutants  # noqa: E402  (the scratch copy helpers)

LABELS = run_mutants.JUDGING_LABELS
DEFAULT_EXCLUDE = run_mutants.JUDGING_EXCLUDE
SOURCE_ROOTS = ("src/", "data_prep/", "kernels/", "jobs/")
# -Og keeps each statement on its own lines for gcov and the tests near their release speed; NDEBUG as released.
# Programs link __gcov_dump even unreferenced, so that a test's forked child that ends with _exit (which skips
# gcov's flush at exit) can write its counts through a weak reference (tests/unit/monitor/test_terminal.cpp).
COVERAGE_CMAKE = ["-DCMAKE_C_FLAGS=--coverage", "-DCMAKE_CXX_FLAGS=--coverage",
                  "-DCMAKE_C_FLAGS_RELEASE=-Og -DNDEBUG", "-DCMAKE_CXX_FLAGS_RELEASE=-Og -DNDEBUG",
                  "-DCMAKE_EXE_LINKER_FLAGS=--coverage -Wl,--undefined=__gcov_dump",
                  "-DCMAKE_SHARED_LINKER_FLAGS=--coverage"]


# A test locking one of these shares a test cluster (a local SLURM, network namespaces) that a scratch copy must
# not touch: it is left out. A test locking anything else (its data folder) is mapped and judged like the others,
# but never runs beside another test holding the same lock.
CLUSTER_LOCKS = {"local_slurm", "netns_cluster"}
_LOCKS = {}
_LOCKS_GUARD = threading.Lock()


def log(text: str) -> None:
    print(text, flush=True)


@contextlib.contextmanager
def holding(names):
    """Holds this process's lock for each named ctest RESOURCE_LOCK, taken in name order so two holders cannot
    deadlock."""
    with _LOCKS_GUARD:
        locks = [_LOCKS.setdefault(name, threading.Lock()) for name in sorted(set(names))]
    with contextlib.ExitStack() as stack:
        for lock in locks:
            stack.enter_context(lock)
        yield


def sha(data) -> str:
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()


def is_source(rel: str) -> bool:
    return rel.startswith(SOURCE_ROOTS) and rel.endswith((".cpp", ".c"))


# ------------------------------------------------------------------------------------------ tests' own files


def suite_files(tree: pathlib.Path, suite: str) -> list:
    """The unit test files that define GoogleTest suite `suite`, with the headers beside them and tests/common."""
    pattern = re.compile(r"^\s*(?:TEST|TEST_F|TEST_P|TYPED_TEST)\(\s*" + re.escape(suite) + r"\s*,", re.M)
    pattern_p = re.compile(r"INSTANTIATE_TEST_SUITE_P\(\s*\w+\s*,\s*" + re.escape(suite) + r"\s*,")
    found = []
    for test in sorted((tree / "tests").rglob("*.cpp")):
        text = test.read_text(errors="replace")
        if pattern.search(text) or pattern_p.search(text):
            found.append(test)
            found += sorted(test.parent.glob("*.h"))
    return found


def own_files(tree: pathlib.Path, build: pathlib.Path, test: dict) -> list:
    """The files whose change can change what a ctest test runs: see the module's docstring."""
    files = sorted((tree / "tests" / "common").glob("*"))
    command = test.get("command") or []
    for word in command:
        path = pathlib.Path(word)
        if word.startswith("--gtest_filter="):
            continue
        if path.suffix in (".sh", ".py") and tree in path.parents and path.name != "gtest_suite.sh":
            files += sorted(p for p in path.parent.glob("*") if p.is_file())
        elif build in path.parents and not path.suffix:  # a test binary: its sources' folder mirrors its own
            folder = tree / path.parent.relative_to(build)
            if folder.name != "unit":
                files += sorted(p for p in folder.glob("*") if p.suffix in (".cpp", ".h"))
    if command and command[-1].endswith(".*") and any(w.endswith("gtest_suite.sh") for w in command):
        files += suite_files(tree, command[-1][:-2].split("/")[-1])
    return sorted(set(files))


def test_key(tree: pathlib.Path, build: pathlib.Path, test: dict) -> str:
    h = hashlib.sha256(test["name"].encode() + b"\0" + json.dumps(test.get("command")).encode())
    for path in own_files(tree, build, test):
        h.update(str(path.relative_to(tree)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def chosen_tests(build: pathlib.Path, exclude: str) -> list:
    """ctest's tests with one of LABELS, not excluded and holding no lock on a test cluster, with their locks."""
    shown = run_mutants.run(["ctest", "--show-only=json-v1"], cwd=build)
    if shown.returncode != 0:
        raise SystemExit("ctest --show-only failed: " + shown.stderr[-2000:])
    out = []
    for number, test in enumerate(json.loads(shown.stdout).get("tests", []), 1):
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        if not set(props.get("LABELS", [])) & set(LABELS) or re.search(exclude, test["name"]):
            continue
        locks = props.get("RESOURCE_LOCK") or []
        if set(locks) & CLUSTER_LOCKS:
            continue
        out.append({"name": test["name"], "number": number, "command": test.get("command") or [], "locks": locks})
    return out


# ---------------------------------------------------------------------------------------------- gcov


def gcov_records(build: pathlib.Path, prefix: pathlib.Path) -> list:
    """gcov's JSON for every .gcda a test left under `prefix` (its .gcno linked beside it first)."""
    records = []
    for gcda in sorted(prefix.rglob("*.gcda")):
        real = pathlib.Path("/") / gcda.relative_to(prefix)
        if build not in real.parents or "tests" in real.relative_to(build).parts[:1]:
            continue
        gcno = real.with_suffix(".gcno")
        if not gcno.exists():
            continue
        beside = gcda.with_suffix(".gcno")
        if not beside.exists():
            os.link(gcno, beside)
        done = subprocess.run(["gcov", "--json-format", "--stdout", "--object-directory", str(gcda.parent),
                               str(gcda)], cwd=build, capture_output=True, text=True)
        for row in done.stdout.splitlines():
            if row.startswith("{"):
                records.append(json.loads(row))
    return records


def source_of(tree: pathlib.Path, record: dict, name: str):
    """The tree-relative path of a file gcov names, or None when it is not one of the sources mutated."""
    path = pathlib.Path(name)
    if not path.is_absolute():
        path = pathlib.Path(record.get("current_working_directory", "")) / path
    try:
        rel = str(pathlib.Path(os.path.normpath(path)).relative_to(tree))
    except ValueError:
        return None
    return rel if is_source(rel) else None


def lines_run(tree: pathlib.Path, records: list) -> dict:
    """path -> (set of executed lines, set of instrumented lines, [(start, end, ran)] functions)."""
    out = {}
    for record in records:
        for f in record.get("files", []):
            rel = source_of(tree, record, f["file"])
            if rel is None:
                continue
            ran, known, functions = out.setdefault(rel, (set(), set(), {}))
            for line in f.get("lines", []):
                known.add(line["line_number"])
                if line["count"] > 0:
                    ran.add(line["line_number"])
            for fn in f.get("functions", []):
                span = (fn["start_line"], fn["end_line"])
                functions[span] = functions.get(span, False) or fn["execution_count"] > 0
    return {rel: (ran, known, [(a, b, r) for (a, b), r in sorted(fn.items())]) for rel, (ran, known, fn) in out.items()}


# ------------------------------------------------------------------------------------------ the map


class CoverageMap:
    """The records of --dir/coverage: which tests reach a line of a source file as it is now."""

    def __init__(self, folder: pathlib.Path):
        self.folder = folder
        self.records = {}  # test name -> record
        for path in sorted((folder / "tests").glob("*.json")) if (folder / "tests").exists() else []:
            record = json.loads(path.read_text())
            self.records[record["name"]] = record
        self._mappings = {}

    def text_of(self, digest: str) -> list:
        path = self.folder / "texts" / f"{digest}.txt"
        return path.read_text().splitlines() if path.exists() else None

    def shape_of(self, digest: str) -> dict:
        path = self.folder / "shapes" / f"{digest}.json"
        return json.loads(path.read_text()) if path.exists() else None

    def mapping(self, old: str, new_text: str) -> dict:
        """Line numbers of `new_text` -> those of the text with digest `old` (changed lines absent)."""
        key = (old, sha(new_text))
        if key not in self._mappings:
            before = self.text_of(old) or []
            matcher = difflib.SequenceMatcher(None, before, new_text.splitlines(), autojunk=False)
            out = {}
            for a, b, size in matcher.get_matching_blocks():
                for k in range(size):
                    out[b + k + 1] = a + k + 1
            self._mappings[key] = out
        return self._mappings[key]

    def reaches(self, entry: dict, line: int, text: str, loose: bool = False) -> bool:
        """Whether a test's record of a file (`entry`) shows it running `line` of the file's text now (`loose`: or
        the function around it)."""
        ran = set(entry["ran"])
        if entry["sha"] != sha(text):
            mapped = self.mapping(entry["sha"], text)
            if line not in mapped:  # a changed line: reached when the unchanged lines around it ran
                above = [mapped[n] for n in sorted(mapped) if n < line][-1:]
                below = [mapped[n] for n in sorted(mapped) if n > line][:1]
                return any(self.reaches_old(entry, n, ran, loose) for n in above + below)
            line = mapped[line]
        return self.reaches_old(entry, line, ran, loose)

    def reaches_old(self, entry: dict, line: int, ran: set, loose: bool = False) -> bool:
        shape = self.shape_of(entry["sha"]) or {"known": [], "functions": []}
        if line in ran:
            return True
        if line in set(shape["known"]) and not loose:
            return False
        spans = [(a, b) for a, b in shape["functions"] if a <= line <= b]
        if spans:  # not instrumented: reached when its (innermost) function ran
            a, b = min(spans, key=lambda s: s[1] - s[0])
            return any(a <= n <= b for n in ran)
        return bool(ran)

    def covering(self, path: str, line: int, text: str, names: set, loose: bool = False) -> list:
        """The tests (among `names`, those ctest has now) that reach path:line, cheapest first; `loose`: those that
        run the function around it (gcov may count a statement's continuation line apart, and never run)."""
        out = []
        for name, record in self.records.items():
            entry = record["files"].get(path)
            if name in names and entry and self.reaches(entry, line, text, loose):
                out.append(name)
        return sorted(out, key=lambda n: (self.records[n]["seconds"], n))

    def seconds(self, name: str) -> float:
        return self.records[name]["seconds"]

    def locks(self, name: str) -> list:
        """The ctest RESOURCE_LOCKs the test holds while it runs."""
        return self.records[name].get("locks", [])


# ------------------------------------------------------------------------------------------ collecting


class Collector:
    def __init__(self, args):
        self.args = args
        self.folder = pathlib.Path(args.dir).resolve() / "coverage"
        self.folder.mkdir(parents=True, exist_ok=True)
        for sub in ("tests", "texts", "shapes", "runs"):
            (self.folder / sub).mkdir(exist_ok=True)
        self.lock = threading.Lock()  # the tests running at once share the texts and shapes of the files

    def prepare(self) -> pathlib.Path:
        """The instrumented copy of the sources, configured once and brought up to date."""
        build = run_mutants.prepare(self.folder, "worktree" if self.args.worktree else "head", COVERAGE_CMAKE)
        started = time.monotonic()
        done = run_mutants.run(["cmake", "--build", str(build), "-j", str(self.args.jobs)], env=run_mutants.build_env())
        if done.returncode != 0:
            raise SystemExit("the instrumented copy does not build:\n" + done.stdout[-4000:])
        log(f"instrumented build up to date ({time.monotonic() - started:.0f} s)")
        return build

    def save_text(self, tree: pathlib.Path, rel: str, shape: tuple) -> str:
        """Keeps the file's text and what gcov instruments of it (lines, functions) under its digest."""
        data = (tree / rel).read_bytes()
        digest = sha(data)
        with self.lock:
            text_path = self.folder / "texts" / f"{digest}.txt"
            if not text_path.exists():
                text_path.write_bytes(data)
            shape_path = self.folder / "shapes" / f"{digest}.json"
            old = json.loads(shape_path.read_text()) if shape_path.exists() else {"known": [], "functions": []}
            known = set(old["known"]) | shape[1]
            functions = {tuple(f) for f in old["functions"]} | {(a, b) for a, b, _ in shape[2]}
            staged = shape_path.with_suffix(".tmp")
            staged.write_text(json.dumps({"known": sorted(known), "functions": sorted(functions)}))
            staged.replace(shape_path)
        return digest

    def run_one(self, build: pathlib.Path, test: dict, key: str) -> dict:
        prefix = self.folder / "runs" / sha(test["name"])[:16]
        shutil.rmtree(prefix, ignore_errors=True)
        prefix.mkdir(parents=True)
        env = {**run_mutants.build_env(), "GCOV_PREFIX": str(prefix), "GCOV_PREFIX_STRIP": "0"}
        listing = prefix / "select.txt"
        listing.write_text(f"0,0,0,{test['number']}\n")
        with holding(test["locks"]):
            started = time.monotonic()
            done = subprocess.run(["ctest", "-I", str(listing), "--timeout", str(self.args.timeout)], cwd=build,
                                  env=env, capture_output=True, text=True)
            seconds = time.monotonic() - started
        found = lines_run(build.parent, gcov_records(build, prefix))
        shutil.rmtree(prefix, ignore_errors=True)
        files = {}
        for rel, shape in found.items():
            digest = self.save_text(build.parent, rel, shape)
            if shape[0]:
                files[rel] = {"sha": digest, "ran": sorted(shape[0])}
        return {"name": test["name"], "key": key, "seconds": round(seconds, 2), "passed": done.returncode == 0,
                "locks": test["locks"], "when": time.strftime("%F %T"), "files": files}

    def update(self) -> CoverageMap:
        build = self.prepare()
        tree = build.parent
        tests = chosen_tests(build, self.args.exclude)
        current = CoverageMap(self.folder)
        todo = []
        for test in tests:
            key = test_key(tree, build, test)
            record = current.records.get(test["name"])
            if self.args.refresh or record is None or record["key"] != key:
                todo.append((test, key))
        log(f"coverage: {len(tests)} tests, {len(tests) - len(todo)} recorded, {len(todo)} to run")
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.args.jobs) as pool:
            futures = {pool.submit(self.run_one, build, test, key): test for test, key in todo}
            for n, future in enumerate(concurrent.futures.as_completed(futures), 1):
                try:
                    record = future.result()
                except Exception as error:  # one test's coverage lost, not the others': it runs again next time
                    log(f"  [{n}/{len(todo)}] {futures[future]['name']}: no coverage ({error!r})")
                    continue
                path = self.folder / "tests" / f"{sha(record['name'])[:16]}.json"
                path.write_text(json.dumps(record))
                log(f"  [{n}/{len(todo)}] {record['name']}: {record['seconds']:.0f} s, "
                    f"{'passed' if record['passed'] else 'FAILED'}, {len(record['files'])} files reached "
                    f"({(time.monotonic() - started) / 60:.1f} min)")
        return CoverageMap(self.folder)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default=os.environ.get("FUSETRAIN_BASELINE_MUTANT_DIR", "/tmp/fusetrain-baseline-mutants"),
                   help="scratch folder outside the repository (the map lives in its coverage/ folder)")
    p.add_argument("--update", action="store_true", help="build the instrumented copy and run the tests not recorded")
    p.add_argument("--refresh", action="store_true", help="run every test again")
    p.add_argument("--query", nargs="*", default=[], metavar="PATH:LINE", help="the tests that reach these lines")
    p.add_argument("--worktree", action="store_true", help="the working tree's files (uncommitted changes too)")
    p.add_argument("--jobs", type=int, default=2, help="build parallelism and tests run at once (default 2)")
    p.add_argument("--timeout", type=int, default=1500, help="seconds a test may run (default 1500)")
    p.add_argument("--exclude", default=DEFAULT_EXCLUDE, help=f"ctest names left out (default {DEFAULT_EXCLUDE!r})")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    coverage = Collector(args).update() if args.update or args.refresh else CoverageMap(
        pathlib.Path(args.dir).resolve() / "coverage")
    names = set(coverage.records)
    for spec in args.query:
        path, _, line = spec.partition(":")
        tests = coverage.covering(path, int(line), (REPO / path).read_text(), names)
        log(f"{spec}: {len(tests)} tests" + "".join(f"\n  {t} ({coverage.seconds(t):.0f} s)" for t in tests))
    if not args.query:
        reached = {}
        for record in coverage.records.values():
            for rel, entry in record["files"].items():
                reached.setdefault(rel, set()).update(entry["ran"])
        log(f"{len(coverage.records)} tests recorded; {len(reached)} source files reached, "
            f"{sum(len(v) for v in reached.values())} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
