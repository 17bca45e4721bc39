#!/usr/bin/env python3
# The whole-tree mutation baseline: a deterministic sample of generated mutants from every source file, each
# judged by the tests that reach its line (per-test coverage), cached per file content, tabled per folder.
"""Mutation baseline over the whole tree (see tests/README.md, "Whole-tree baseline").

What is mutated: every C and C++ source of src/, data_prep/, kernels/ (their CPU code; .cu files are not
compiled without CUDA) and jobs/ (the C shim). Each file's mutants are universalmutator's rules as in
mutate_changes.py, sampled deterministically (the same sample for the same file content): --per-file (3) for a
file of up to 200 lines, one more per further 100 lines begun (--per-100). Mutants are tried in sample order until
that many compile (at most 3x as many tried).

How each is judged, in a scratch copy outside the repository (--dir), every source compiled alone
(FUSETRAIN_UNITY_ALONE, so a mutant recompiles one file; the tests keep their unity batches):
  1. the mutated object is compiled: invalid (does not compile), equivalent (object identical to the original's),
     duplicate (identical to an earlier mutant's object);
  2. the tests that execute its line (coverage_map.py: one instrumented run of the unit, mpi, failure and e2e
     labels, each test with its own coverage) run cheapest first, two at a time, to the first failure, or until
     --budget minutes of them have run (a survivor then says how many of its tests ran; --budget 0 runs them
     all, and judges such survivors again); a line gcov counts apart and never saw run (a statement's
     continuation line) is judged by the tests that ran its function; a line in no function a test ran is "not
     covered", judged without running anything, and counts as survived;
  3. a test that fails is run once on the unmutated copy (per state of the tree) before it counts as a catch.
Declared equivalents (equivalent.txt) are not run. A test run longer than 3x its recorded time plus 60 s counts
as caught (timeout).

The cache: one result per mutant under --dir/results, keyed by the file's content, the line and the mutation;
caught, invalid and equivalent results stand while the file is unchanged; a survivor is judged again when the
tests that reach its line, or their own files, change (those tests run first). A stopped run resumes where it
left off; --table prints the per-folder table from the cache at any time, judging nothing. The verdicts are also
kept in the repository (--ledger, tools/mutants/baseline.jsonl; ledger.py): read into the cache before a sitting and
written back after each file, so that a sitting on a fresh machine resumes too.

    make mutants MODE=baseline                                    # a sitting: judge what the cache lacks
    python3 tools/mutants/baseline.py --table --markdown          # the table, from the cache
    python3 tools/mutants/baseline.py --list 'src/history/*'      # the sample, nothing run
    nice -n 15 python3 tools/mutants/baseline.py --hours 3        # a sitting of at most 3 hours
"""
import argparse
import collections
import concurrent.futures
import fnmatch
import json
import math
import os
import pathlib
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import venv_python  # noqa: E402

venv_python.require_universalmutator(__file__)
import coverage_map  # noqa: E402
import ledger  # noqa: E402
import mutate_changes as mc  # noqa: E402
import run_mutants  # noqa: E402


def log(text: str) -> None:
    print(text, flush=True)


# ------------------------------------------------------------------------------------------ the sample


def source_files(read_paths) -> list:
    return sorted(p for p in read_paths() if coverage_map.is_source(p))


def quota(lines: int, args) -> int:
    return args.per_file + max(0, math.ceil((lines - 200) / 100)) * args.per_100


def plan_of(path: str, text: str, args) -> dict:
    found = mc.generate(path, text, set(range(1, len(text.splitlines()) + 1)))
    lines = len(text.splitlines())
    return {"path": path, "sha": mc.sha(text), "lines": lines, "generated": len(found),
            "quota": quota(lines, args), "order": mc.sample(found, quota(lines, args))}


# ------------------------------------------------------------------------------------------ judging


class Judge:
    """Judges mutants in the scratch copy: compile, then the covering tests, with the cache under --dir."""

    def __init__(self, args, coverage, paths: list):
        self.args, self.coverage = args, coverage
        self.s = mc.Scratch(args, paths)  # every source compiled alone, the tests' batches as usual
        ok, seconds, out = self.s.build_all()
        if not ok:
            raise SystemExit("the unmutated scratch copy does not build:\n" + out[-4000:])
        log(f"unmutated scratch build up to date ({seconds:.0f} s)")
        self.names = set(self.s.ctest_names())  # the GoogleTest suites are listed once their binaries are built
        self.results = pathlib.Path(args.dir) / "results"
        self.verified = pathlib.Path(args.dir) / "verified.json"  # tests seen passing unmutated, per tree state

    def build_targets(self, names: list) -> bool:
        code, _, _ = self.s.ninja(self.s.targets_for(names))
        return code == 0

    def run_test(self, name: str):
        """(passed, seconds, first failure) of one ctest test, under its time limit."""
        limit = 3 * max(self.coverage.seconds(name), 1.0) + 60
        with coverage_map.holding(self.coverage.locks(name)):
            return self.s.ctest(self.s.selection([name]), limit)

    def unmutated_passes(self, m, name: str) -> bool:
        """Whether `name` passes on the unmutated copy (run once per state of the tree, with the file restored;
        the mutant's targets must be built again after it)."""
        known = json.loads(self.verified.read_text()) if self.verified.exists() else {}
        key = mc.sha(self.s.tree_digest + name)
        if key not in known:
            mc.restore(self.s, m)
            try:
                ok = self.build_targets([name]) and self.run_test(name)[0]
            finally:
                mc.apply(self.s, m)
            known[key] = ok
            self.verified.write_text(json.dumps(known, indent=1))
            if not ok:
                log(f"    {name} fails on the unmutated copy: left out of the judgement")
        return known[key]

    def run_covering(self, m, tests: list) -> tuple:
        """Runs `tests` in order, args.jobs at a time, to the first failure that the unmutated copy does not
        share: (failing test or None, why, tests run, linked)."""
        built, ran, started = set(), 0, time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.args.jobs) as pool:
            for start in range(0, len(tests), self.args.jobs):
                if self.args.budget and time.monotonic() - started > 60 * self.args.budget:
                    break  # the rest of the tests wait: the survivor says how many ran
                batch = tests[start: start + self.args.jobs]
                targets = set(self.s.targets_for(batch))
                if not targets <= built:
                    if not self.build_targets(batch):
                        return None, "does not link", ran, False
                    built |= targets
                outcomes = list(pool.map(self.run_test, batch))
                ran += len(batch)
                for name, (passed, seconds, first) in zip(batch, outcomes):
                    if passed:
                        continue
                    checked = self.unmutated_passes(m, name)
                    built = set()  # the unmutated check may have rebuilt the targets without the mutant
                    if checked:
                        return name, f"{first} ({seconds:.0f} s)", ran, True
        return None, "", ran, True

    def judge(self, m, text: str, original: str, seen: dict, tests: list) -> dict:
        result = {"file": m.path, "line": m.line, "from": m.before.rstrip("\n"), "to": m.after.rstrip("\n"),
                  "kind": m.kind}
        mc.apply(self.s, m)
        try:
            digest, _ = self.s.object_digest(m.path)
            if digest is None:
                return {**result, "verdict": "invalid", "by": "does not compile"}
            if digest == original:
                return {**result, "verdict": "equivalent", "by": "object code identical to the original's"}
            if digest in seen:
                return {**result, "verdict": "duplicate", "by": f"object code identical to mutant {seen[digest]}'s"}
            seen[digest] = m.key
            if not tests:
                return {**result, "verdict": "survived", "stage": "not covered", "by": "no test reaches the line"}
            name, why, ran, linked = self.run_covering(m, tests)
            if not linked:
                return {**result, "verdict": "invalid", "by": "does not link"}
            if name:
                return {**result, "verdict": "caught", "stage": "covering tests", "by": why, "tests_run": ran}
            stage = "covering tests" if ran == len(tests) else f"covering tests, {ran} of {len(tests)} within the budget"
            return {**result, "verdict": "survived", "stage": stage, "by": f"{ran} of the {len(tests)} tests that reach "
                    f"the line pass", "tests_run": ran}
        finally:
            mc.restore(self.s, m)


# ------------------------------------------------------------------------------------------ a sitting


def tests_key(coverage, tests: list) -> str:
    return mc.sha(json.dumps([(t, coverage.records[t]["key"]) for t in tests]))


def cached(path: pathlib.Path, m, coverage, tests: list, equivalents: dict, budget: float):
    """The standing result of a mutant, or None when it must be judged (again)."""
    declared = equivalents.get((m.path, m.before.strip(), m.after.strip()))
    if declared:
        return mc.declared_result(m, declared)
    if not path.exists():
        return None
    result = json.loads(path.read_text())
    if result["verdict"] == "survived" and result.get("tests_key") != tests_key(coverage, tests):
        return None  # the tests that reach it changed: judge it again
    if result["verdict"] == "survived" and not budget and result.get("tests_run", len(tests)) < len(tests):
        return None  # judged within a budget, now without one
    return result


def first_changed(coverage, tests: list, earlier: list) -> list:
    """The tests that reach a survivor, those new or changed since it was judged first."""
    old = dict(earlier or [])
    return sorted(tests, key=lambda t: (old.get(t) == coverage.records[t]["key"], coverage.seconds(t), t))


def judge_file(judge, plan: dict, text: str, args, equivalents: dict, deadline: float) -> list:
    rows, valid, tried, seen, original = [], 0, 0, {}, None
    for m in plan["order"]:
        if valid >= plan["quota"] or tried >= 3 * plan["quota"]:
            break
        tried += 1
        path = judge.results / f"{m.key}.json"
        tests = (judge.coverage.covering(m.path, m.line, text, judge.names)
                 or judge.coverage.covering(m.path, m.line, text, judge.names, loose=True))
        result = cached(path, m, judge.coverage, tests, equivalents, args.budget)
        if result is None and time.monotonic() < deadline:
            if original is None:
                original, out = judge.s.object_digest(m.path)
                if original is None:
                    raise SystemExit(f"{m.path} does not compile unmutated:\n{out[-3000:]}")
            earlier = json.loads(path.read_text()).get("tests") if path.exists() else None
            t0 = time.monotonic()
            result = judge.judge(m, text, original, seen, first_changed(judge.coverage, tests, earlier))
            result.update(judged_s=round(time.monotonic() - t0), when=time.strftime("%F %T"),
                          tests=[(t, judge.coverage.records[t]["key"]) for t in tests],
                          tests_key=tests_key(judge.coverage, tests))
            path.write_text(json.dumps(result, indent=1))
            log(f"  {m.path}:{m.line} [{m.kind}] {result['verdict']}"
                f"{' (' + result['stage'] + ')' if result['verdict'] == 'survived' else ''}: {m.describe()}"
                f"  ({result.get('by', '')}; {len(tests)} tests reach it; {result['judged_s']} s)")
        if result is None:
            return rows  # out of time: the rest of the file waits for the next sitting
        result["key"] = m.key
        valid += result["verdict"] != "invalid"
        rows.append(result)
    return rows


def save_summary(args, plan: dict, rows: list, built: bool) -> None:
    target = ledger.summary_file(pathlib.Path(args.dir), mc.sha(plan["path"]))
    target.parent.mkdir(exist_ok=True)
    done = len([r for r in rows if r["verdict"] != "invalid"]) >= plan["quota"] or len(rows) >= 3 * plan["quota"]
    summary = {k: plan[k] for k in ("path", "sha", "lines", "generated", "quota")}
    summary.update(built=built, complete=done or not built, rows=rows, when=time.strftime("%F %T"),
                   commit=mc.git("rev-parse", "--short", "HEAD").strip())
    target.write_text(json.dumps(summary, indent=1))


def sitting(args, plans: list, texts: dict, every_source: list) -> None:
    deadline = time.monotonic() + args.hours * 3600 if args.hours else float("inf")
    coverage = coverage_map.Collector(args).update()
    judge = Judge(args, coverage, every_source)
    equivalents = mc.read_equivalents(pathlib.Path(args.equivalent))
    for plan in plans:
        built = plan["path"] in judge.s.objects
        rows = judge_file(judge, plan, texts[plan["path"]], args, equivalents, deadline) if built else []
        save_summary(args, plan, rows, built)
        if args.ledger:
            ledger.save(pathlib.Path(args.ledger), pathlib.Path(args.dir), every_source, mc.sha)
        if time.monotonic() >= deadline:
            log("the sitting's time is up: the next sitting resumes from the cache")
            break


# ------------------------------------------------------------------------------------------ the table


def read_summaries(args, texts: dict) -> list:
    out = []
    for path in sorted(texts):
        f = ledger.summary_file(pathlib.Path(args.dir), mc.sha(path))
        summary = json.loads(f.read_text()) if f.exists() else None
        if summary and summary["sha"] != mc.sha(texts[path]):
            summary = {**summary, "stale": True}
        out.append(summary or {"path": path, "missing": True})
    return out


def folder_of(path: str) -> str:
    return str(pathlib.PurePosixPath(path).parent)


def table(args, texts: dict) -> int:
    summaries = read_summaries(args, texts)
    folders = collections.defaultdict(collections.Counter)
    survivors, when, commits = [], [], set()
    for s in summaries:
        c = folders[folder_of(s["path"])]
        c["files"] += 1
        if s.get("missing") or s.get("stale"):
            c["not judged" if s.get("missing") else "stale"] += 1
            if s.get("missing"):
                continue
        if not s["built"]:
            c["not built"] += 1
            continue
        c["generated"] += s["generated"]
        # A file whose every generated mutant was tried and fewer than its quota compiled is whole, its sample short.
        exhausted = len(s["rows"]) >= s["generated"]
        c["incomplete"] += not s["complete"] and not exhausted
        c["short"] += not s["complete"] and exhausted
        when.append(s["when"])
        commits.add(s["commit"])
        for r in s["rows"]:
            c[r["verdict"]] += 1
            if r["verdict"] == "survived":
                c["not covered"] += r.get("stage") == "not covered"
                survivors.append(r)
    print_table(args, folders, survivors, when, commits)
    return 1 if survivors or any(c["stale"] or c["not judged"] for c in folders.values()) else 0


def score(c) -> str:
    judged = c["caught"] + c["survived"]
    return f"{100 * c['caught'] / judged:.1f}%" if judged else "-"


def print_table(args, folders: dict, survivors: list, when: list, commits: set) -> None:
    columns = ["files", "generated", "invalid", "equivalent", "duplicate", "caught", "survived", "not covered"]
    total = sum(folders.values(), collections.Counter())
    rows = sorted(folders.items()) + [("total", total)]
    labels = {"short": "short (every generated mutant tried)"}
    notes = lambda c: ", ".join(f"{c[k]} {labels.get(k, k)}" for k in ("not built", "incomplete", "short", "stale",
                                                                       "not judged") if c[k])
    if args.markdown:
        log("| folder | " + " | ".join(columns) + " | score | notes |")
        log("|---" * (len(columns) + 3) + "|")
        for name, c in rows:
            log(f"| {name} | " + " | ".join(str(c[k]) for k in columns) + f" | {score(c)} | {notes(c)} |")
    else:
        log(f"{'folder':20} " + " ".join(f"{k[:10]:>10}" for k in columns) + f" {'score':>7}  notes")
        for name, c in rows:
            log(f"{name:20} " + " ".join(f"{c[k]:10}" for k in columns) + f" {score(c):>7}  {notes(c)}")
    log(f"\njudged {min(when, default='-')} to {max(when, default='-')}, commits {', '.join(sorted(commits)) or '-'}")
    log(f"survivors ({len(survivors)}):")
    for r in sorted(survivors, key=lambda r: (r["file"], r["line"])):
        log(f"  {r['file']}:{r['line']} [{r['kind']}] {r['from'].strip()}  ->  {r['to'].strip()}"
            f"  ({r.get('stage')}: {r.get('by', '')})")


# ------------------------------------------------------------------------------------------ main


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("globs", nargs="*", help="only source paths matching these globs (e.g. 'src/history/*')")
    p.add_argument("--per-file", type=int, default=3, help="mutants judged per file of up to 200 lines (3)")
    p.add_argument("--per-100", type=int, default=1, help="more per 100 lines begun beyond 200 (1)")
    p.add_argument("--dir", default=os.environ.get("FUSETRAIN_BASELINE_MUTANT_DIR", "/tmp/fusetrain-baseline-mutants"),
                   help="scratch folder outside the repository, kept between sittings (builds, coverage, results)")
    p.add_argument("--jobs", type=int, default=2, help="build parallelism and tests run at once (default 2)")
    p.add_argument("--hours", type=float, default=0, help="stop starting new mutants after this long (0: no limit)")
    p.add_argument("--budget", type=float, default=10,
                   help="minutes of tests per mutant: a survivor stops there, saying how many of its tests ran (0: all)")
    p.add_argument("--worktree", action="store_true", help="the working tree's files (uncommitted changes too)")
    p.add_argument("--list", action="store_true", help="list each file's sample; build and run nothing")
    p.add_argument("--table", action="store_true", help="print the per-folder table from the cache; run nothing")
    p.add_argument("--markdown", action="store_true", help="the table as Markdown (for tests/README.md)")
    p.add_argument("--timeout", type=int, default=1500, help="seconds a test may run in the coverage run")
    p.add_argument("--exclude", default=coverage_map.DEFAULT_EXCLUDE,
                   help=f"ctest names left out (default {coverage_map.DEFAULT_EXCLUDE!r})")
    p.add_argument("--refresh", action="store_true", help="run every test's coverage again")
    p.add_argument("--equivalent", default=str(HERE / "equivalent.txt"))
    p.add_argument("--ledger", default=str(ledger.DEFAULT),
                   help="the verdicts kept in the repository: read before, written after each file ('' for neither)")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    # A stopped sitting puts the mutated file back (the judge's finally) before it exits.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    read = mc.source_reader(args)
    listed = (lambda: subprocess.run(["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard"],
                                     capture_output=True, text=True).stdout.split()) if args.worktree else (
        lambda: mc.git("ls-tree", "-r", "--name-only", "HEAD").split())
    every_source = source_files(listed)
    paths = [p for p in every_source if not args.globs or any(fnmatch.fnmatch(p, g) for g in args.globs)]
    texts = {p: read(p) for p in paths}
    if args.ledger:
        taken = ledger.restore(pathlib.Path(args.ledger), pathlib.Path(args.dir), mc.sha)
        if taken:
            log(f"{taken} file summaries taken from {args.ledger}")
    if args.table:
        return table(args, texts)
    plans = [plan_of(p, texts[p], args) for p in paths]
    log(f"{len(plans)} files, {sum(p['generated'] for p in plans)} mutants generated, "
        f"{sum(p['quota'] for p in plans)} to judge")
    if args.list:
        for plan in plans:
            log(f"\n{plan['path']}: {plan['lines']} lines, {plan['generated']} mutants, {plan['quota']} judged:")
            for m in plan["order"][: plan["quota"] * 2]:
                log(f"  {m.line:4} [{m.kind}] {m.describe()}")
        return 0
    started = time.monotonic()
    sitting(args, plans, texts, every_source)
    log(f"\nsitting: {(time.monotonic() - started) / 60:.1f} min")
    return table(args, texts)


if __name__ == "__main__":
    sys.exit(main())
