#!/usr/bin/env python3
# Planted-bug check: applies each one-line mutation of tools/mutants/mutants.txt to a scratch copy of the
# sources, rebuilds what changed, runs the tests that own that code and reports each mutant caught or survived.
"""Mutation check of the core (see tests/README.md, "Planted bugs").

The scratch copy lives outside the repository (default /tmp/fusetrain-mutants, or --dir): tree/ holds the
sources of HEAD (or of the working tree with --worktree) and tree/build its own Ninja build. Files are
copied only where they changed, so a second run rebuilds incrementally; every mutant edits one file of
tree/, rebuilds only the targets its tests need, and the file is restored before the next mutant. The real
working tree is never written.

Before any mutant the selected tests run on the unmutated copy and must pass. A mutant is caught when one of
its tests fails or times out; the first failing test is named (with the GoogleTest case inside an MPI
binary). Exit status 0 only when every mutant is caught.
"""
import argparse
import configparser
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
# What a test script may run from the build: the programs, and the library jobs/workstation/run.sh preloads (a
# mutant of its source is otherwise judged against the library built without it).
BUILD_TARGETS_FOR_SCRIPTS = ["fusetrain", "fusetrain-prep", "ft_loopback_only"]
# The ctest labels the generated mutants are judged by (mutate_changes.py's label runs, coverage_map.py's map),
# and the tests left out of them: the coursework smoke takes minutes and holds the local Slurm lock (the sweep
# tests take seconds and are sweep_command.cpp's only tests of its plans, its dry run and its report).
JUDGING_LABELS = ["unit", "mpi", "failure", "e2e"]
JUDGING_EXCLUDE = r"^coursework\."


def log(text: str) -> None:
    print(text, flush=True)


def run(cmd, cwd=None, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)


# ---------------------------------------------------------------------------------------------- mutants


class Mutant:
    def __init__(self, name: str, section: configparser.SectionProxy):
        self.name = name
        self.file = section["file"].strip()
        self.before = section["from"].strip()
        self.after = section["to"].strip()
        self.tests = section["tests"].strip()
        self.why = section.get("why", "").strip()
        if "\n" in self.before or "\n" in self.after:
            raise SystemExit(f"mutant {name}: from/to must be one line")
        if self.before == self.after:
            raise SystemExit(f"mutant {name}: from and to are the same")


def read_mutants(path: pathlib.Path) -> list:
    parser = configparser.ConfigParser(interpolation=None, delimiters=(":",), comment_prefixes=("#",),
                                       inline_comment_prefixes=None, strict=True)
    parser.optionxform = str
    parser.read(path)
    return [Mutant(name, parser[name]) for name in parser.sections()]


# --------------------------------------------------------------------------------------- scratch copy


def snapshot_files(source: str, stage: pathlib.Path) -> str:
    """Writes the sources to `stage`; returns what they are (commit, and whether the working tree)."""
    commit = run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"]).stdout.strip()
    if source == "head":
        with tempfile.TemporaryFile() as archive:
            subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", "HEAD"], stdout=archive, check=True)
            archive.seek(0)
            with tarfile.open(fileobj=archive) as tar:
                tar.extractall(stage)
        return f"commit {commit}"
    listed = run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"]).stdout
    for rel in filter(None, listed.split("\0")):
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (stage / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, stage / rel)
    return f"working tree on commit {commit}"


def sync_tree(stage: pathlib.Path, tree: pathlib.Path) -> int:
    """Makes tree/ (build/ aside) equal to stage/, touching only files whose bytes differ."""
    changed = 0
    wanted = set()
    for src in stage.rglob("*"):
        if not src.is_file():
            continue
        rel = src.relative_to(stage)
        wanted.add(rel)
        dst = tree / rel
        if dst.is_file() and dst.read_bytes() == src.read_bytes():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        os.utime(dst)  # newer than any object built from the old bytes
        changed += 1
    for dst in list(tree.rglob("*")):
        rel = dst.relative_to(tree)
        if rel.parts[0] == "build" or not dst.is_file():
            continue
        if rel not in wanted:
            dst.unlink()
            changed += 1
    return changed


def prepare(scratch: pathlib.Path, source: str, cmake_args: list = None) -> pathlib.Path:
    scratch = scratch.resolve()
    if scratch == REPO or REPO in scratch.parents or scratch in REPO.parents:
        raise SystemExit(f"{scratch}: the scratch copy must lie outside the repository {REPO}")
    tree = scratch / "tree"
    tree.mkdir(parents=True, exist_ok=True)
    stage = pathlib.Path(tempfile.mkdtemp(prefix="stage-", dir=scratch))
    try:
        what = snapshot_files(source, stage)
        changed = sync_tree(stage, tree)
    finally:
        shutil.rmtree(stage)
    log(f"scratch copy {tree}: {what}, {changed} files changed since its last run")
    build = tree / "build"
    if not (build / "build.ninja").exists():
        extra = cmake_args if cmake_args is not None else os.environ.get("FUSETRAIN_MUTANT_CMAKE_ARGS", "").split()
        args = ["cmake", "-S", str(tree), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                "-DFUSETRAIN_CUDA=OFF", "-DFUSETRAIN_NCCL=OFF", *extra]
        log("configuring: " + " ".join(args))
        done = run(args, env=build_env())
        if done.returncode != 0:
            raise SystemExit(done.stdout[-4000:] + done.stderr[-4000:])
    return build


def build_env() -> dict:
    env = dict(os.environ)
    cache = env.get("FUSETRAIN_CACHE", str(pathlib.Path.home() / ".cache" / "fusetrain"))
    env.setdefault("CCACHE_DIR", str(pathlib.Path(cache) / "ccache"))
    return env


def build(build_dir: pathlib.Path, targets: list, jobs: int) -> tuple:
    started = time.monotonic()
    done = run(["cmake", "--build", str(build_dir), "-j", str(jobs), "--target", *targets], env=build_env())
    return done.returncode == 0, time.monotonic() - started, done.stdout[-3000:] + done.stderr[-2000:]


# ------------------------------------------------------------------------------------------------ tests


def test_commands(build_dir: pathlib.Path) -> dict:
    """ctest's tests: name -> the build targets its command runs."""
    shown = run(["ctest", "--show-only=json-v1"], cwd=build_dir)
    if shown.returncode != 0:
        raise SystemExit("ctest --show-only failed: " + shown.stderr[-2000:])
    out = {}
    for test in json.loads(shown.stdout).get("tests", []):
        command = test.get("command") or []
        targets = set()
        for word in command:
            path = pathlib.Path(word)
            if path.name in ("bash", "sh") or word.endswith(".sh"):
                targets.update(BUILD_TARGETS_FOR_SCRIPTS)
            elif str(build_dir) in word and path.name and not path.suffix:
                targets.add(path.name)
        if test["name"] in out:  # tests are picked by their place in this list: a repeated name shifts it
            raise SystemExit(f"ctest lists two tests named {test['name']}: rename one (lint.unique_test_names)")
        out[test["name"]] = sorted(targets)
    return out


def select(tests: dict, pattern: str) -> list:
    chosen = [name for name in tests if re.search(pattern, name)]
    if not chosen:
        raise SystemExit(f"no ctest test matches {pattern!r}")
    return chosen


def run_tests(build_dir: pathlib.Path, names: list, jobs: int) -> tuple:
    """(passed, seconds, first failing test with its GoogleTest case where one is named)."""
    regex = "^(" + "|".join(re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", n) for n in names) + ")$"
    started = time.monotonic()
    done = run(["ctest", "-R", regex, "-j", str(jobs), "--stop-on-failure", "--output-on-failure"], cwd=build_dir)
    seconds = time.monotonic() - started
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)  # GoogleTest's colours
    if done.returncode == 0:
        return True, seconds, ""
    listed = text.split("The following tests FAILED:")[-1]
    rows = re.findall(r"^\s*\d+ - (.+?) \(([^()]*)\)\s*$", listed, re.M)
    if not rows:
        return False, seconds, f"ctest exit {done.returncode}"
    name, why = rows[0]
    return False, seconds, f"{name.split('  #')[0]} ({why}){failed_case(text, name)}"


def failed_case(text: str, name: str) -> str:
    """' [Suite.Case]': the first GoogleTest case failing in the output of ctest test `name`, when that test
    runs a whole binary (an MPI test); "" for a test that is one case already or names none."""
    if re.match(r"^[\w/]+\.\w", name):
        return ""
    block = re.split(r"^\s*\d+/\d+ Test +#\d+: " + re.escape(name) + r" ", text, flags=re.M)[-1]
    block = re.split(r"^\s*\d+/\d+ Test +#\d+: ", block, flags=re.M)[0]
    case = re.search(r"^\[  FAILED  \] ([\w/.]+)", block, re.M)
    return f" [{case.group(1)}]" if case else ""


# ------------------------------------------------------------------------------------------------ main


def mutate(tree: pathlib.Path, m: Mutant) -> tuple:
    """Applies m to its file in tree/; returns the file's original text and the mutated line's number."""
    path = tree / m.file
    text = path.read_text()
    line = text[: text.index(m.before)].count("\n") + 1
    path.write_text(text.replace(m.before, m.after, 1))
    return text, line


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default=os.environ.get("FUSETRAIN_MUTANT_DIR", "/tmp/fusetrain-mutants"),
                        help="scratch folder outside the repository (kept between runs for incremental builds)")
    parser.add_argument("--worktree", action="store_true", help="mutate the working tree's files, not HEAD's")
    parser.add_argument("--only", default="", help="comma-separated mutant names (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="build and ctest parallelism (default 2)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--mutants", default=str(HERE / "mutants.txt"))
    return parser.parse_args()


def chosen_mutants(args: argparse.Namespace) -> list:
    mutants = read_mutants(pathlib.Path(args.mutants))
    if not args.only:
        return mutants
    keep = set(args.only.split(","))
    unknown = keep - {m.name for m in mutants}
    if unknown:
        raise SystemExit(f"unknown mutants: {', '.join(sorted(unknown))}")
    return [m for m in mutants if m.name in keep]


def baseline(build_dir: pathlib.Path, mutants: list, jobs: int) -> tuple:
    """Builds the unmutated copy and runs every selected test on it; returns ctest's tests and each mutant's."""
    targets = sorted({"unit_tests", "unit_tests_base", "mpi_tests", "mpi_train_tests", *BUILD_TARGETS_FOR_SCRIPTS})
    ok, seconds, output = build(build_dir, targets, jobs)
    if not ok:
        raise SystemExit("the unmutated copy does not build:\n" + output)
    log(f"unmutated build: {seconds:.0f} s")
    tests = test_commands(build_dir)
    chosen = {m.name: select(tests, m.tests) for m in mutants}
    for m in mutants:  # refuse a mutant that does not apply before spending time on the others
        count = (build_dir.parent / m.file).read_text().count(m.before)
        if count != 1:
            raise SystemExit(f"mutant {m.name}: 'from' occurs {count} times in {m.file}: update it")
    union = sorted({n for names in chosen.values() for n in names})
    passed, seconds, first = run_tests(build_dir, union, jobs)
    if not passed:
        raise SystemExit(f"the unmutated copy fails {first}: fix that before judging mutants")
    log(f"unmutated copy passes the {len(union)} selected tests in {seconds:.0f} s\n")
    return tests, chosen


def judge(m: Mutant, build_dir: pathlib.Path, tests: dict, names: list, jobs: int) -> tuple:
    """Applies m, rebuilds the targets of its tests, runs them and restores the file: (verdict, report line)."""
    tree = build_dir.parent
    original, line = mutate(tree, m)
    test_s = 0.0
    try:
        built, build_s, output = build(build_dir, sorted({t for n in names for t in tests[n]}), jobs)
        if not built:
            log(output)
            verdict, result = "broken", "DOES NOT BUILD (fix the mutant)"
        else:
            passed, test_s, first = run_tests(build_dir, names, jobs)
            verdict, result = ("survived", "SURVIVED") if passed else ("caught", f"caught by {first}")
    finally:
        (tree / m.file).write_text(original)
    return verdict, f"{m.name:44} {m.file}:{line}  {result}  (build {build_s:.0f} s, tests {test_s:.0f} s)"


def main() -> int:
    args = parse_args()
    mutants = chosen_mutants(args)
    if args.list:
        for m in mutants:
            log(f"{m.name:46} {m.file:32} {m.why}")
        return 0
    started = time.monotonic()
    build_dir = prepare(pathlib.Path(args.dir), "worktree" if args.worktree else "head")
    tests, chosen = baseline(build_dir, mutants, args.jobs)
    rows, verdicts = [], []
    for i, m in enumerate(mutants, 1):
        verdict, row = judge(m, build_dir, tests, chosen[m.name], args.jobs)
        verdicts.append(verdict)
        rows.append(f"[{i:2}/{len(mutants)}] {row}")
        log(rows[-1])
    minutes = (time.monotonic() - started) / 60
    summary = (f"{verdicts.count('caught')} of {len(mutants)} mutants caught, {verdicts.count('survived')} "
               f"survived, {verdicts.count('broken')} did not build, in {minutes:.1f} min (--jobs {args.jobs})")
    log("\n" + summary)
    (pathlib.Path(args.dir) / "last-run.txt").write_text("\n".join(rows) + "\n" + summary + "\n")
    return 0 if verdicts.count("caught") == len(mutants) else 1


if __name__ == "__main__":
    sys.exit(main())
