# The code-shape rules of src/ and kernels/, checked with lizard (a C/C++ function analyser): no function
# over 100 lines outside declarative tables, Trainer::run at most 80, no repeated block of 10 or more lines.
"""Usage: code_shape.py SOURCE_ROOT. Exit 0 when every rule holds, 1 naming each breach, 77 without lizard."""
from __future__ import annotations

import csv
import pathlib
import re
import subprocess
import sys

MAX_FUNCTION_LINES = 100
MAX_TRAINER_RUN_LINES = 80
MIN_DUPLICATE_LINES = 10
# Declarative tables: one entry per line, as long as the things they list.
TABLES = {"ft::option_table"}
SUFFIXES = {".cpp", ".h", ".cu", ".cuh"}


def sources(root: pathlib.Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for folder in ("src", "kernels")
                  for p in (root / folder).rglob("*") if p.suffix in SUFFIXES)


def lizard(root: pathlib.Path, *args: str) -> str:
    # Files are named one by one: lizard picks files by suffix when it walks a folder and skips .cu.
    done = subprocess.run([sys.executable, "-m", "lizard", "-l", "cpp", *args, *sources(root)], cwd=root,
                          capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"lizard failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def long_functions(root: pathlib.Path) -> list[str]:
    problems = []
    for row in csv.reader(lizard(root, "--csv").splitlines()):
        length, file, name, start = int(row[4]), row[6], row[7], row[9]
        limit = MAX_TRAINER_RUN_LINES if name == "ft::Trainer::run" else MAX_FUNCTION_LINES
        if length > limit and name not in TABLES:
            problems.append(f"{file}:{start}: {name} is {length} lines (at most {limit})")
    return problems


def duplicate_blocks(root: pathlib.Path) -> list[str]:
    problems = []
    text = lizard(root, "-Eduplicate")
    for block in text.split("Duplicate block:")[1:]:
        places = re.findall(r"^(\S+):(\d+) ~ (\d+)$", block, re.M)
        if places and int(places[0][2]) - int(places[0][1]) + 1 >= MIN_DUPLICATE_LINES:
            problems.append("repeated block: " + ", ".join(f"{f}:{a}-{b}" for f, a, b in places))
    return problems


def main() -> int:
    try:
        import lizard  # noqa: F401  (only its presence)
    except ImportError:
        print("SKIP: lizard is not installed (tools/setup.sh installs it)")
        return 77
    root = pathlib.Path(sys.argv[1])
    problems = long_functions(root) + duplicate_blocks(root)
    for problem in problems:
        print(f"FAIL: {problem}")
    if not problems:
        print(f"PASS: {len(sources(root))} files: functions within {MAX_FUNCTION_LINES} lines (Trainer::run within "
              f"{MAX_TRAINER_RUN_LINES}), no repeated block of {MIN_DUPLICATE_LINES} or more lines")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
