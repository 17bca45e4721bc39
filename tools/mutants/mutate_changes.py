#!/usr/bin/env python3
# Generated mutants of the lines a change touches: universalmutator's C++ rules applied to the changed lines
# of src/, each mutant compiled alone, run against the tests that own its file, then the wider suite.
"""Mutation check of a change, with mutants nobody picked (see tests/README.md, "Generated mutants").

What is mutated: the lines of src/*.cpp that a change adds or modifies, against a base commit (--base REV,
or --since DATE: the last commit before DATE), optionally restricted to path globs (positional); or whole
files and line ranges (--files src/a.cpp src/b.cpp:10-40). Headers are left out unless --headers (a header
mutant recompiles every file that includes it).

How mutants are made: universalmutator's rules for C++ (universal, c_like and cpp) on each chosen line,
keeping the kinds a code review asks about: relational and arithmetic operators swapped, constants changed
and moved by one, conditions negated or forced, && and || swapped, statements and calls dropped, arguments
swapped, min/max and begin/end swapped. Its break/continue insertions and string emptying are left out.
Mutants are deduplicated (the same mutated line); a file with more than --per-file mutants is sampled
deterministically (one mutant per line, then a second per line, ..., in the order of a hash of the mutant),
and the report gives generated and sampled counts.

How they are judged, in a scratch copy outside the repository (--dir) built like the project (unity batches,
so the compiler cache of a checkout's build serves it), except that the files being mutated are kept out of
the batches (FUSETRAIN_UNITY_ALONE), so one mutant recompiles one translation unit:
  1. compile the mutated file's object alone: a mutant that does not compile is invalid and dropped; one
     whose object is byte-identical to the original's is equivalent (trivial compiler equivalence), one
     identical to an earlier mutant's object is a duplicate of it;
  2. run the tests that own the file (ctest --stop-on-failure; a stage's unmutated time is measured when
     a mutant first reaches it): the unit tests of the source folder's mirror
     (tests/unit/<folder>/test_<file>.cpp) and of every unit test file including the file's header, plus
     the declared owners in tools/mutants/owners.txt (MPI, e2e, failure cases);
  3. a mutant that survives that runs the unit, mpi, failure and e2e labels in turn, each to its first
     failure (--stage owners stops after step 2).
Each test run has a time limit of 3x the unmutated run's time plus 60 s; a mutant that exceeds it is caught
(timeout). Mutants listed in tools/mutants/equivalent.txt (with the reason) are not run. Results are kept
per mutant under --dir/results, so an interrupted run resumes; a survivor is judged again once tests/ has
changed.
"""
import argparse
import collections
import fnmatch
import hashlib
import json
import os
import pathlib
import re
import shlex
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import venv_python  # noqa: E402

venv_python.require_universalmutator(__file__)
import run_mutants  # noqa: E402  (the scratch copy and ctest helpers of the hand-written list)

RULES = ["universal.rules", "c_like.rules", "cpp.rules"]
FULL_LABELS = run_mutants.JUDGING_LABELS
DEFAULT_FULL_EXCLUDE = run_mutants.JUDGING_EXCLUDE
# The scratch build: the project's unity batches (a checkout configured with the same CMAKE_CXX_FLAGS shares
# its compiler cache entries), the files being mutated compiled alone (FUSETRAIN_UNITY_ALONE, set per run), and
# a mutant that drops a value-returning function's return invalid rather than undefined behaviour.
SCRATCH_CMAKE = {"CMAKE_EXPORT_COMPILE_COMMANDS": "ON", "CMAKE_CXX_FLAGS": "-Werror=return-type"}


def log(text: str) -> None:
    print(text, flush=True)


def git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ----------------------------------------------------------------------------------------- which lines


def base_of(args) -> str:
    if args.base:
        return git("rev-parse", "--verify", args.base + "^{commit}").strip()
    found = git("rev-list", "-1", "--first-parent", f"--before={args.since}", "HEAD").strip()
    if not found:
        raise SystemExit(f"no commit before {args.since}")
    return found


def changed_lines(base: str, worktree: bool) -> dict:
    """path -> set of line numbers (in the version mutated) that the change adds or modifies."""
    spec = [base] if worktree else [base, "HEAD"]
    diff = git("diff", "-M", "--unified=0", "--no-color", *spec, "--", "src")
    out, path = collections.defaultdict(set), None
    for row in diff.splitlines():
        if row.startswith("+++ "):
            path = None if row == "+++ /dev/null" else row[6:]
        elif row.startswith("@@") and path:
            m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", row)
            start, count = int(m.group(1)), int(m.group(2) or 1)
            out[path].update(range(start, start + count))
    if worktree:  # new files git does not track yet: every line is new
        for rel in git("ls-files", "--others", "--exclude-standard", "--", "src").split():
            out[rel].update(range(1, len((REPO / rel).read_text().splitlines()) + 1))
    return out


def explicit_lines(specs: list, read) -> dict:
    out = collections.defaultdict(set)
    for spec in specs:
        path, _, span = spec.partition(":")
        count = len(read(path).splitlines())
        if span:
            a, _, b = span.partition("-")
            out[path].update(range(int(a), int(b or a) + 1))
        else:
            out[path].update(range(1, count + 1))
    return out


def wanted(path: str, globs: list, headers: bool) -> bool:
    if not (path.endswith(".cpp") or (headers and path.endswith(".h"))):
        return False
    return not globs or any(fnmatch.fnmatch(path, g) for g in globs)


# --------------------------------------------------------------------------------------------- mutants

# The kind of each universalmutator rule kept (by its left and right side); rules not named are dropped.
KINDS = [
    (r"^(\\\+|-\(\[\^>\]\)|\\\*|\(\[\^\\\*/\]\)/\(\[\^\\\*/\]\)|%) ==> ", "arithmetic"),
    (r"^(!=|==|>=|<=|<|\(\[\^-\]\)>) ==> ", "relational"),
    (r"^(\\\+=|-=|--|\\\+\\\+) ==> ", "arithmetic"),
    (r"^\(\\D\)\(\\d\+\)\(\\D\) ==> .*[+-]1\)", "bound by one"),
    (r"^\(\\D\)\(\\d\+\)\(\\D\) ==> ", "constant"),
    (r"^(&&|\\\|\\\|) ==> ", "logical"),
    (r"^! ==>", "condition negated"),
    (r"^\(\[\^&\]\)&|^\(\[\^\|\]\)\\\|", "bitwise"),
    (r"^(if|while) ?\(\\\(\.\*\\\)\) ==> (if|while) ?\(!", "condition negated"),
    (r"^if ?\(\\\(\.\*\\\)\) ==> if ?\((0|1)==", "condition forced"),
    (r"^(\\\|\\\||&&|\\\(|\\s)\.\*", "condition forced"),
    (r"^else ==>", "else dropped"),
    (r"^while ==> if", "loop runs once"),
    (r"^\(\^\\s\*\)\(\\S\+\[\^\{\}\]\+\.\*\)\\n ==> \\1/\*", "statement dropped"),
    (r"^\(\[,\\\(\\\[\\\{\]\)", "arguments swapped"),
    (r"^(min|max|begin|end|any_of|all_of|none_of|min_element|max_element|accumulate|inner_product"
     r"|front_inserter|back_inserter) ==> ", "call swapped"),
    (r"^at ?\(", "index changed"),
]


def kind_of(rule_text: str):
    for pattern, kind in KINDS:
        if re.search(pattern, rule_text):
            return kind
    return None


TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|<<=|>>=|->|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|\+=|-=|\*=|/=|%=|::|\S")
SWAPPED_CALLS = {"min", "max", "begin", "end", "any_of", "all_of", "none_of", "min_element", "max_element",
                 "accumulate", "inner_product", "front_inserter", "back_inserter"}


def looks_invalid(before: str, after: str, kind: str) -> bool:
    """Cheap refusals before compiling, by the token the rule changed: a template's angle bracket, a pointer
    or reference declarator, digits inside a name, part of a longer name. The compiler would reject most of
    them; this saves the compile."""
    a, b = list(TOKEN.finditer(before)), [t.group() for t in TOKEN.finditer(after)]
    j = next((i for i, t in enumerate(a) if i >= len(b) or t.group() != b[i]), None)
    if j is None:
        return False
    token = a[j].group()
    spaced = before[a[j].start() - 1: a[j].start()] == " " and before[a[j].end(): a[j].end() + 1] == " "
    if kind == "relational":
        return token not in ("<", ">", "<=", ">=", "==", "!=") or (token in ("<", ">") and not spaced)
    if kind == "arithmetic" and token in ("*", "/", "%"):
        return not spaced
    if kind == "bitwise":
        return token not in ("&", "|") or not spaced
    if kind in ("constant", "bound by one"):
        return not token[0].isdigit()
    if kind == "call swapped":
        return token not in SWAPPED_CALLS
    if kind == "arguments swapped":
        return not swaps_whole_arguments(before, after)
    return False


def balanced(text: str) -> bool:
    depth = {"(": 0, "[": 0, "{": 0}
    closing = {")": "(", "]": "[", "}": "{"}
    for ch in text:
        if ch in depth:
            depth[ch] += 1
        elif ch in closing:
            depth[closing[ch]] -= 1
            if depth[closing[ch]] < 0:
                return False
    return not any(depth.values())


def swaps_whole_arguments(before: str, after: str) -> bool:
    """The rule swaps two comma-separated pieces; they must be whole arguments (brackets balanced in each),
    not a lambda's capture and a parameter, or a structured binding's names and its type, and neither may be
    a string literal."""
    p = 0
    while p < min(len(before), len(after)) and before[p] == after[p]:
        p += 1
    q = 0
    while q < min(len(before), len(after)) - p and before[-1 - q] == after[-1 - q]:
        q += 1
    middle = before[p: len(before) - q]
    parts = middle.split(",")
    # Arguments of one type: a string literal swapped with anything is another type or the order of message
    # text, left out.
    return "," in middle and all(balanced(part) and '"' not in part for part in parts)


class Mutant:
    def __init__(self, path, line, before, after, kind, rule, file_sha):
        self.path, self.line, self.before, self.after, self.kind, self.rule = path, line, before, after, kind, rule
        self.key = sha(f"{path}\0{file_sha}\0{line}\0{after}")[:20]

    def describe(self) -> str:
        return f"{self.before.strip()}  ->  {self.after.strip()}"


CONTROL = re.compile(r"^(if|for|while|switch|do|else|try|catch|return|case|default)\b")


DECLARATION = re.compile(r"^(?!(return|throw|delete|goto|co_return|else)\b)(static\s+|constexpr\s+|const\s+)*[\w:]+(<[^=;]*>)?[&*]?\s+[&*]?\w+\s*(=[^=]|\{|\(|;)")


def code_lines(source: list) -> list:
    """Each line without its // comment (string literals aside, which the rules leave alone)."""
    return [re.sub(r"//.*$", "", line.rstrip("\n")).rstrip() for line in source]


def shape_allows(code: list, lineno: int, kind: str) -> bool:
    """Whether a mutant of this kind makes sense on this line: a dropped statement must be one whole
    statement after another (not a declaration's head, a brace, a lambda's end or one line of several); swapped
    arguments must be a call's, not a function's parameters."""
    text = code[lineno - 1].strip()
    if not text or text.startswith(("#", "/*", "*")):
        return False
    if kind == "statement dropped":
        if not text.endswith(";") or text.startswith("}") or text.count("(") != text.count(")"):
            return False
        if DECLARATION.match(text) or text.endswith(("= default;", "= delete;")):
            return False  # a name later lines use, or a special member: it would not compile or link
        previous = next((c.strip() for c in reversed(code[: lineno - 1]) if c.strip()), "")
        return previous == "" or previous.endswith((";", "{", "}")) or re.match(r"^(public|private|protected):$", previous)
    if kind == "arguments swapped":
        return not (text.endswith("{") and not CONTROL.match(text) and "=" not in text)
    return True


def generate(path: str, text: str, lines: set) -> list:
    from universalmutator import mutator
    source = text.splitlines(keepends=True)
    if source and not source[-1].endswith("\n"):
        source[-1] += "\n"
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):  # it prints the rules it uses and what it skipped
        found = mutator.mutants_regexp(source, RULES, ignorePatterns=[], ignoreStringOnly=True)
    file_sha = sha(text)
    code = code_lines(source)
    out, seen = [], set()
    for lineno, after, (rule_text, _where), _ in found:
        if lineno not in lines:
            continue
        kind = kind_of(rule_text)
        before = source[lineno - 1]
        if kind is None or after.count("\n") != 1 or after == before:
            continue
        if (lineno, after) in seen or looks_invalid(before, after, kind) or not shape_allows(code, lineno, kind):
            continue
        seen.add((lineno, after))
        out.append(Mutant(path, lineno, before, after, kind, rule_text, file_sha))
    return out


def sample(mutants: list, limit: int) -> list:
    """All of them, or a deterministic spread: each line's mutants in hash order, taken one per line a round."""
    if limit <= 0 or len(mutants) <= limit:
        return sorted(mutants, key=lambda m: (m.line, m.key))
    by_line = collections.defaultdict(list)
    for m in mutants:
        by_line[m.line].append(m)
    for group in by_line.values():
        group.sort(key=lambda m: m.key)
    order = sorted(by_line, key=lambda line: sha(f"{mutants[0].path}:{line}"))
    spread, depth = [], 0
    while len(spread) < len(mutants):
        spread += [by_line[line][depth] for line in order if depth < len(by_line[line])]
        depth += 1
    return spread  # all of them, in the order they are tried until `limit` compile


# ------------------------------------------------------------------------------------ declared tables


def read_owners(path: pathlib.Path) -> list:
    """(glob, ctest regex) rows of owners.txt."""
    rows = []
    for raw in path.read_text().splitlines():
        raw = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if raw:
            glob, regex = raw.split(None, 1)
            rows.append((glob, regex.strip()))
    return rows


def read_equivalents(path: pathlib.Path) -> dict:
    """(file, before, after) -> reason, from blocks of 'file:', 'from:', 'to:', 'why:' lines."""
    out, block = {}, {}

    def close():
        if block:
            missing = {"file", "from", "to", "why"} - set(block)
            if missing:
                raise SystemExit(f"{path}: an entry lacks {', '.join(sorted(missing))}: {block}")
            out[(block["file"], block["from"], block["to"])] = block["why"]
            block.clear()

    if not path.exists():
        return out
    for raw in path.read_text().splitlines():
        if raw.startswith("#"):
            continue
        if not raw.strip():
            close()
            continue
        if raw.startswith((" ", "\t")) and block.get("last") == "why":
            block["why"] += " " + raw.strip()
            continue
        name, _, value = raw.partition(":")
        name = name.strip()
        if name not in ("file", "line", "from", "to", "why"):
            raise SystemExit(f"{path}: unknown field in {raw!r}")
        block[name] = value.strip()
        block["last"] = name
    close()
    return {k: v for k, v in out.items()}


# ----------------------------------------------------------------------------------------- test owners


def unit_suites(tree: pathlib.Path, src_path: str) -> list:
    """GoogleTest suites of the unit tests that own src_path: its mirror test file and the test files that
    include its header."""
    path = pathlib.PurePosixPath(src_path)
    rel = path.relative_to("src") if path.parts[0] == "src" else path  # kernels/ is included by its folder
    header = str(rel.with_suffix(".h"))
    mirror = tree / "tests" / "unit" / rel.parent / f"test_{rel.stem}.cpp"
    suites = []
    for test in sorted((tree / "tests" / "unit").rglob("*.cpp")):
        text = test.read_text(errors="replace")
        if test != mirror and f'#include "{header}"' not in text:
            continue
        for name in re.findall(r"^\s*TEST(?:_F|_P)?\(\s*(\w+)\s*,", text, re.M):
            if name not in suites:
                suites.append(name)
    return suites


def owner_stages(tree: pathlib.Path, src_path: str, owners: list, names: list) -> list:
    """[(label, ctest names)]: the derived unit owners, then the declared owners not among them."""
    stages, taken = [], set()
    suites = unit_suites(tree, src_path)
    if suites:
        pattern = re.compile(r"^(\w+/)?(" + "|".join(suites) + r")\.")
        unit = [n for n in names if pattern.search(n)]
        if unit:
            stages.append(("owners: unit tests", unit))
            taken.update(unit)
    declared = [regex for glob, regex in owners if fnmatch.fnmatch(src_path, glob)]
    if declared:
        pattern = re.compile("|".join(f"(?:{r})" for r in declared))
        more = [n for n in names if pattern.search(n) and n not in taken]
        if more:
            stages.append(("owners: declared", more))
    return stages


# --------------------------------------------------------------------------------------- build, tests


class Scratch:
    def __init__(self, args, paths: list, extra_settings: dict = None):
        self.args = args
        self.dir = pathlib.Path(args.dir).resolve()
        cmake = {**SCRATCH_CMAKE, **(extra_settings or {})}
        self.settings = {**cmake, "FUSETRAIN_UNITY_ALONE": ";".join(sorted(paths))}
        settings = " ".join(f"-D{k}={v}" for k, v in cmake.items())
        os.environ["FUSETRAIN_MUTANT_CMAKE_ARGS"] = (settings + " " +
                                                     os.environ.get("FUSETRAIN_MUTANT_CMAKE_ARGS", "")).strip()
        self.build = run_mutants.prepare(self.dir, "worktree" if args.worktree else "head")
        self.tree = self.build.parent
        self._configure_scratch()
        self.results = self.dir / "results"
        self.results.mkdir(exist_ok=True)
        self.baselines = self.dir / "baselines.json"
        self.objects = self._objects()
        self.tests_digest = self._digest("tests")
        self.tree_digest = sha(self._digest("src") + self._digest("kernels") + self.tests_digest)
        self.tests = None  # ctest name -> build targets, once the tree is built
        self.originals = {}  # path -> the unmutated text of a file being mutated

    def _configure_scratch(self):
        """A scratch folder configured before these settings (or by hand) is configured again with them."""
        cache = (self.build / "CMakeCache.txt").read_text()
        missing = [f"-D{k}={v}" for k, v in self.settings.items()
                   if not re.search(rf"^{k}:\w+={re.escape(v)}$", cache, re.M)]
        if missing:
            log("configuring the scratch build again: " + " ".join(missing))
            done = run_mutants.run(["cmake", "-S", str(self.tree), "-B", str(self.build), *missing],
                                   env=run_mutants.build_env())
            if done.returncode != 0:
                raise SystemExit(done.stdout[-3000:] + done.stderr[-3000:])

    def _objects(self) -> dict:
        """source path in the tree -> its object, relative to the build (compile_commands.json)."""
        commands = json.loads((self.build / "compile_commands.json").read_text())
        out = {}
        for entry in commands:
            source = pathlib.Path(entry["file"])
            if self.tree in source.parents:
                output = entry.get("output")  # older CMake names it only in the command
                if output is None:
                    words = shlex.split(entry.get("command", ""))
                    output = words[words.index("-o") + 1]
                out[str(source.relative_to(self.tree))] = output
        return out

    def _digest(self, folder: str) -> str:
        h = hashlib.sha256()
        for path in sorted((self.tree / folder).rglob("*")):
            if path.is_file():
                h.update(str(path.relative_to(self.tree)).encode() + b"\0" + path.read_bytes())
        return h.hexdigest()

    def run(self, cmd, limit=None):
        """(returncode or None on timeout, seconds, output); the whole process group is killed on timeout."""
        started = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=self.build, env=run_mutants.build_env(), text=True, errors="replace",
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=limit)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            code = None
        return code, time.monotonic() - started, out

    def ninja(self, targets: list):
        return self.run(["cmake", "--build", str(self.build), "-j", str(self.args.jobs), "--target", *targets])

    def build_all(self):
        code, seconds, out = self.run(["cmake", "--build", str(self.build), "-j", str(self.args.jobs)])
        return code == 0, seconds, out

    def object_digest(self, src_path: str):
        """Compiles src_path's object alone: (its sha256, "") or (None, the compiler's output)."""
        obj = self.objects.get(src_path)
        if obj is None:
            raise SystemExit(f"{src_path}: no object in the scratch build (is it compiled on this host?)")
        code, _, out = self.ninja([obj])
        if code != 0:
            return None, out
        return hashlib.sha256((self.build / obj).read_bytes()).hexdigest(), ""

    def ctest_names(self) -> dict:
        if self.tests is None:
            self.tests = run_mutants.test_commands(self.build)
        return self.tests

    def targets_for(self, names: list) -> list:
        tests = self.ctest_names()
        return sorted({t for n in names for t in tests[n]} | set(run_mutants.BUILD_TARGETS_FOR_SCRIPTS))

    def selection(self, names: list) -> list:
        """ctest arguments that run exactly these tests (by number: a list of names may outgrow ctest's regex)."""
        order = list(self.ctest_names())
        numbers = sorted(order.index(n) + 1 for n in names)
        listing = self.dir / "selections" / f"{sha(json.dumps(numbers))[:16]}.txt"
        listing.parent.mkdir(exist_ok=True)
        listing.write_text("0,0,0," + ",".join(map(str, numbers)) + "\n")  # an empty range (",,,") means all
        return ["-I", str(listing)]

    def ctest(self, select: list, limit):
        """Runs ctest with `select` arguments to the first failure: (passed, seconds, first failure)."""
        cmd = ["ctest", *select, "-j", str(self.args.jobs), "--stop-on-failure", "--output-on-failure"]
        code, seconds, out = self.run(cmd, limit=limit)
        if code is None:
            return False, seconds, f"timeout after {seconds:.0f} s"
        text = re.sub(r"\x1b\[[0-9;]*m", "", out)
        if code == 0:
            return True, seconds, "no tests" if "No tests were found" in text else ""
        rows = re.findall(r"^\s*\d+ - (.+?) \(([^()]*)\)\s*$", text.split("The following tests FAILED:")[-1], re.M)
        if not rows:
            return False, seconds, f"ctest exit {code}: " + text[-300:].replace("\n", " ")
        name, why = rows[0]
        name = name.split("  #")[0]
        return False, seconds, f"{name} ({why}){run_mutants.failed_case(text, name)}"

    def known_baseline(self, select: list):
        known = json.loads(self.baselines.read_text()) if self.baselines.exists() else {}
        entry = known.get(sha(self.tree_digest + json.dumps(select)))
        return entry["seconds"] if entry else None

    def baseline(self, label: str, select: list) -> float:
        """Seconds the unmutated tree takes for this selection, measured once per state of src/ and tests/.
        Call it with the tree unmutated and built, or for a selection measured before."""
        seconds = self.known_baseline(select)
        if seconds is not None:
            return seconds
        passed, seconds, first = self.ctest(select, None)
        if not passed:
            raise SystemExit(f"the unmutated copy fails {label}: {first}; fix that before judging mutants")
        log(f"  unmutated, {label}: passes in {seconds:.0f} s")
        known = json.loads(self.baselines.read_text()) if self.baselines.exists() else {}
        known[sha(self.tree_digest + json.dumps(select))] = {"label": label, "select": select, "seconds": seconds,
                                                             "when": time.strftime("%F %T")}
        self.baselines.write_text(json.dumps(known, indent=1))
        return seconds


# ------------------------------------------------------------------------------------------------ judge


def full_stages(args) -> list:
    """The wider suite, label by label, each run to its first failure."""
    return [(f"label {label}", ["-L", f"^{label}$", "-E", args.full_exclude]) for label in FULL_LABELS]


def apply(s: Scratch, m: Mutant) -> None:
    """Writes the mutant into the scratch copy (the original text kept in s.originals)."""
    path = s.tree / m.path
    text = s.originals.setdefault(m.path, path.read_text())
    lines = text.splitlines(keepends=True)
    if lines[m.line - 1] != m.before:
        raise SystemExit(f"{m.path}:{m.line} is not the line the mutant was made from")
    lines[m.line - 1] = m.after
    path.write_text("".join(lines))


def restore(s: Scratch, m: Mutant) -> None:
    (s.tree / m.path).write_text(s.originals[m.path])


def full_baselines(s: Scratch, m: Mutant, args) -> None:
    """The label runs' unmutated times, measured once per state of the sources and tests: the mutated file is
    restored and everything rebuilt, the labels run, then the mutant is put back."""
    stages = full_stages(args)
    if all(s.known_baseline(select) is not None for _, select in stages):
        return
    restore(s, m)
    try:
        ok, _, out = s.build_all()
        if not ok:
            raise SystemExit("the unmutated scratch copy does not build:\n" + out[-3000:])
        for label, select in stages:
            s.baseline(label, select)
    finally:
        apply(s, m)


def owner_baseline(s: Scratch, m: Mutant, label: str, select: list, names: list) -> None:
    """The unmutated time of an owners stage, measured the first time a mutant of the file reaches it (a stage
    that every mutant before was caught by never costs a run): the file is restored, the stage's targets built
    and run, and the mutant put back."""
    if s.known_baseline(select) is not None:
        return
    restore(s, m)
    try:
        code, _, out = s.ninja(s.targets_for(names))
        if code != 0:
            raise SystemExit(f"the unmutated scratch copy does not build the targets of {label}:\n" + out[-3000:])
        s.baseline(label, select)
    finally:
        apply(s, m)


def judge(s: Scratch, m: Mutant, stages: list, args, seen_objects: dict, original_object: str) -> dict:
    result = {"file": m.path, "line": m.line, "from": m.before.rstrip("\n"), "to": m.after.rstrip("\n"),
              "kind": m.kind, "rule": m.rule}
    apply(s, m)
    try:
        digest, _ = s.object_digest(m.path)
        if digest is None:
            return {**result, "verdict": "invalid", "by": "does not compile"}
        if digest == original_object:
            return {**result, "verdict": "equivalent", "by": "object code identical to the original's"}
        if digest in seen_objects:
            return {**result, "verdict": "duplicate", "by": f"object code identical to mutant {seen_objects[digest]}'s"}
        seen_objects[digest] = m.key
        plan = [(label, s.selection(names), names) for label, names in stages]
        if args.stage == "all":
            plan += [(label, select, None) for label, select in full_stages(args)]
        built_all = False
        for label, select, names in plan:
            if names is not None:
                owner_baseline(s, m, f"{m.path} {label}", select, names)
                code, _, out = s.ninja(s.targets_for(names))
            elif not built_all:
                full_baselines(s, m, args)
                code, _, out = s.run(["cmake", "--build", str(s.build), "-j", str(args.jobs)])
                built_all = True
            else:
                code, out = 0, ""
            if code != 0:
                if re.search(r"gtest_discover_tests|Error running test executable", out):
                    return {**result, "verdict": "caught", "stage": label, "by": "test discovery fails"}
                return {**result, "verdict": "invalid", "by": "does not link: " + out[-300:].replace("\n", " ")}
            limit = 3 * s.baseline(label, select) + 60
            passed, seconds, first = s.ctest(select, limit)
            if not passed:
                return {**result, "verdict": "caught", "stage": label, "by": first, "seconds": round(seconds)}
        return {**result, "verdict": "survived", "stage": plan[-1][0] if plan else "none",
                "tests_digest": s.tests_digest}
    finally:
        restore(s, m)


# ------------------------------------------------------------------------------------------------- main


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = p.add_mutually_exclusive_group()
    what.add_argument("--base", help="mutate the lines changed since this commit (e.g. main, origin/main)")
    what.add_argument("--since", help="mutate the lines changed since the last commit before this date")
    p.add_argument("--files", nargs="+", metavar="PATH[:A-B]",
                   help="mutate these files (or line ranges), alone or besides a change's lines (put it last)")
    p.add_argument("globs", nargs="*", help="only source paths matching these globs (e.g. 'src/io/output_claim*')")
    p.add_argument("--worktree", action="store_true", help="the working tree's files (uncommitted changes too)")
    p.add_argument("--headers", action="store_true", help="mutate changed headers too (slow: many recompiles)")
    p.add_argument("--per-file", type=int, default=12,
                   help="most mutants judged per file, after sampling (0: all; default 12)")
    p.add_argument("--stage", choices=["owners", "all"], default="all",
                   help="owners: stop after the owning tests; all: survivors run the labels too (default)")
    p.add_argument("--full-exclude", default=DEFAULT_FULL_EXCLUDE,
                   help=f"ctest names left out of the label runs (default {DEFAULT_FULL_EXCLUDE!r})")
    p.add_argument("--dir", default=os.environ.get("FUSETRAIN_GENERATED_MUTANT_DIR",
                                                   "/tmp/fusetrain-generated-mutants"),
                   help="scratch folder outside the repository, kept between runs (results, build)")
    p.add_argument("--jobs", type=int, default=2, help="build and ctest parallelism (default 2)")
    p.add_argument("--list", action="store_true", help="generate, sample and list the mutants; build nothing")
    p.add_argument("--report", action="store_true", help="report what the cache holds for these mutants; run none")
    p.add_argument("--json", help="also write the report as JSON to this path")
    p.add_argument("--owners", default=str(HERE / "owners.txt"))
    p.add_argument("--equivalent", default=str(HERE / "equivalent.txt"))
    return p.parse_args()


def source_reader(args):
    if args.worktree:
        return lambda rel: (REPO / rel).read_text()
    return lambda rel: git("show", f"HEAD:{rel}")


def declared_result(m: Mutant, why: str) -> dict:
    return {"file": m.path, "line": m.line, "from": m.before.rstrip("\n"), "to": m.after.rstrip("\n"),
            "kind": m.kind, "verdict": "equivalent", "by": "declared: " + why}


def main() -> int:
    args = parse_args()
    started = time.monotonic()
    read = source_reader(args)
    lines, scopes, chosen_paths = collections.defaultdict(set), [], set()
    if args.base or args.since:
        base = base_of(args)
        changed = changed_lines(base, args.worktree)
        scopes.append(f"lines changed since {base[:10]}" + (f" (last commit before {args.since})" if args.since else "")
                      + (f" in {' '.join(args.globs)}" if args.globs else ""))
        for path, numbers in changed.items():
            if wanted(path, args.globs, args.headers):
                lines[path].update(numbers)
                chosen_paths.add(path)
    if args.files:  # whole files or line ranges, alone or beside a change's lines
        scopes.append("files " + " ".join(args.files))
        for path, numbers in explicit_lines(args.files, read).items():
            if path.endswith(".cpp") or (args.headers and path.endswith(".h")):
                lines[path].update(numbers)
                chosen_paths.add(path)
    if not scopes:
        raise SystemExit("say what to mutate: --base, --since and/or --files")
    scope = "; ".join(scopes)
    paths = sorted(chosen_paths)
    equivalents = read_equivalents(pathlib.Path(args.equivalent))
    plan, counts = [], {}
    for path in paths:
        found = generate(path, read(path), lines[path])
        counts[path] = {"lines": len(lines[path]), "generated": len(found)}
        plan.append((path, sample(found, args.per_file)))
    log(f"{scope}: {len(paths)} files, {sum(c['generated'] for c in counts.values())} mutants generated")
    if args.list:
        for path, chosen in plan:
            c = counts[path]
            log(f"\n{path}: {c['lines']} lines, {c['generated']} mutants; tried in this order until "
                f"{args.per_file} compile:")
            for m in chosen[: 3 * args.per_file if args.per_file > 0 else None]:
                log(f"  {m.line:4} [{m.kind}] {m.describe()}")
        return 0

    s = None if args.report else Scratch(args, [path for path, _ in plan])
    if s:
        ok, seconds, out = s.build_all()
        if not ok:
            raise SystemExit("the unmutated scratch copy does not build:\n" + out[-4000:])
        log(f"unmutated scratch build up to date ({seconds:.0f} s)")
    owners = read_owners(pathlib.Path(args.owners))
    rows = []
    for path, chosen in plan:
        valid = tried = 0
        stages, original_object, seen_objects = None, None, {}
        for m in chosen:
            if args.per_file > 0 and (valid >= args.per_file or tried >= 3 * args.per_file):
                break
            tried += 1
            cache = pathlib.Path(args.dir) / "results" / f"{m.key}.json"
            declared = equivalents.get((m.path, m.before.strip(), m.after.strip()))
            result = json.loads(cache.read_text()) if cache.exists() else None
            if declared:
                result = declared_result(m, declared)
            elif result and result["verdict"] == "survived" and s and (
                    result.get("tests_digest") != s.tests_digest or (args.stage == "all" and result["stage"] == "owners")):
                result = None  # tests changed since, or only the owners ran: judge it again
            if result is None and s:
                if original_object is None:
                    original_object, out = s.object_digest(path)
                    if original_object is None:
                        raise SystemExit(f"{path} does not compile unmutated:\n{out[-3000:]}")
                    stages = owner_stages(s.tree, path, owners, list(s.ctest_names()))
                    log(f"{path}: " + ("; ".join(f"{label} ({len(names)})" for label, names in stages)
                                       or f"no owning tests (add a row to {args.owners})"))
                t0 = time.monotonic()
                result = judge(s, m, stages, args, seen_objects, original_object)
                result["judged_s"] = round(time.monotonic() - t0)
                result["when"] = time.strftime("%F %T")
                cache.write_text(json.dumps(result, indent=1))
                log(f"  {m.path}:{m.line} [{m.kind}] {result['verdict']}: {m.describe()}"
                    f"  ({result.get('by', '')}; {result['judged_s']} s)")
            if result is None:
                continue
            result["key"] = m.key
            if result["verdict"] != "invalid":
                valid += 1
            rows.append(result)
        counts[path]["tried"] = tried
    return report(rows, counts, scope, args, time.monotonic() - started)


def report(rows: list, counts: dict, scope: str, args, seconds: float) -> int:
    verdicts = ["invalid", "duplicate", "equivalent", "caught", "survived"]
    per_file = collections.defaultdict(collections.Counter)
    for r in rows:
        per_file[r["file"]][r["verdict"]] += 1
    log(f"\n{scope}\ngenerated: distinct mutants of the chosen lines; tried: sampled and compiled (until "
        f"{args.per_file} compile); then the verdicts of those tried")
    log(f"{'file':44} {'lines':>5} {'gen':>5} {'tried':>5} " + " ".join(f"{v[:9]:>9}" for v in verdicts))
    folders = collections.defaultdict(collections.Counter)
    for path, c in counts.items():
        v = per_file[path]
        log(f"{path:44} {c['lines']:5} {c['generated']:5} {c.get('tried', 0):5} "
            + " ".join(f"{v[k]:9}" for k in verdicts))
        folder = str(pathlib.PurePosixPath(path).parent)
        folders[folder].update({"generated": c["generated"], "tried": c.get("tried", 0), **v})
    log(f"\n{'folder':24} {'generated':>9} {'judged':>6} {'caught':>6} {'equiv':>6} {'survived':>8} {'score':>7}")
    for folder, v in sorted(folders.items()):
        judged = v["caught"] + v["equivalent"] + v["survived"]
        score = v["caught"] / (v["caught"] + v["survived"]) if v["caught"] + v["survived"] else 1.0
        log(f"{folder:24} {v['generated']:9} {judged:6} {v['caught']:6} {v['equivalent']:6} {v['survived']:8} "
            f"{100 * score:6.1f}%")
    survivors = [r for r in rows if r["verdict"] == "survived"]
    log(f"\nsurvivors ({len(survivors)}):")
    for r in survivors:
        log(f"  {r['file']}:{r['line']} [{r['kind']}] {r['from'].strip()}  ->  {r['to'].strip()}")
    log(f"\n{len(rows)} mutants judged or taken from the cache in {seconds / 60:.1f} min")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"scope": scope, "counts": counts, "rows": rows}, indent=1))
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
