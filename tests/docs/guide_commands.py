#!/usr/bin/env python3
# Runs every command of the guide (the ```sh blocks of README.md and docs/*.md) in a scratch copy of the
# repository on small data, and fails naming the page, line and command when one fails or exits otherwise than shown.
"""The guide-commands test (docs/tests.md, "The guide's commands").

Every line of a ```sh block in README.md and docs/*.md is a command (a line ending in a backslash goes on
in the next; blank lines and lines holding only a comment are not commands). A command runs unless its
line ends with one of these tags in its trailing comment, which say why it cannot run on a CPU machine
in a few minutes:

  [gpu] [slurm] [nodes] [modules] [root] [build] [download] [long]   not run; listed with the reason
  [exit N]                                                  run; must exit with status N (else 0)

Any other [word] at the end of a comment is an error, and so are ```bash/```shell/```console blocks and
indented code blocks: commands go in ```sh blocks, output and usage lines in ```text blocks.

Pages run in a scratch copy of the source tree: README.md first, then each docs/ page in a copy of the
state README.md's commands left, each page's commands in order in one bash process (variables carry
over), stopping at the page's first failure. The scratch copy has build/bin/ pointing at the build's
programs, small data under the paths the guide names (guide_fixture.py), and one substitution in the
commands' text: /usr/share/datasets/fashion-mnist becomes the scratch copy's first GUIDE_IMAGES images of it.

Environment: FUSETRAIN_BIN (folder with fusetrain and fusetrain-prep), FUSETRAIN_SOURCE (the source
tree), FUSETRAIN_TMP (scratch folder, emptied first), FUSETRAIN_PYTHON (the project's Python, default the
one tools/setup.sh makes: it runs this script, and its folder goes first on PATH, so `python` in a command
is that one); GUIDE_JOBS (pages run at once, default 2),
GUIDE_PAGES (a space-separated list of pages, e.g. "docs/data.md", to run only those after README.md),
GUIDE_IMAGES (default 512), GUIDE_PAGE_TIMEOUT (seconds per page, default 300).
Options: --list prints every command with what the test does with it, and runs nothing.
Exit status: 0 all passed, 1 a command failed or a page breaks the conventions, 77 Fashion-MNIST is missing.
"""
import concurrent.futures
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"
NOT_RUN = {
    "gpu": "needs a CUDA device",
    "slurm": "needs a Slurm cluster",
    "nodes": "needs several hosts",
    "modules": "needs a cluster's environment modules (Lmod), Spack or Apptainer",
    "root": "needs root and changes the host (namespaces, daemons)",
    "build": "builds, or needs a configured build folder",
    "download": "needs files this machine does not have (a release, a package download)",
    "long": "runs for minutes, or until stopped",
}
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)")
TAG = re.compile(r"#[^#]*\[([^\[\]]+)\]\s*$")
EXIT_TAG = re.compile(r"^exit (\d+)$")
SHELL_LANGS = {"bash", "shell", "console", "shell-session", "zsh"}
# Environment the test sets for ctest that a user's shell would not have (the job scripts read FUSETRAIN_BIN
# as a file, `fusetrain sweep` reads FUSETRAIN_MPIRUN), and knobs of the scripts the guide runs.
DROP_ENV = ("FUSETRAIN_BIN", "FUSETRAIN_SOURCE", "FUSETRAIN_TMP", "FUSETRAIN_PYTHON", "FUSETRAIN_MPIRUN", "GUIDE_REEXEC",
            "FUSETRAIN_TOOLS", "MPIRUN", "LAUNCHER", "PYTHON", "CONFIG", "NP", "RUN_NAME")
# What the ctest mpirun flags (--oversubscribe --allow-run-as-root --bind-to none, no single-copy) are as
# Open MPI environment settings, so that the guide's `mpirun -np 2 ...` runs as written, as root and on 2 cores.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_hwloc_base_binding_policy": "none",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}


class Command:
    def __init__(self, page, line, text, tag):
        self.page, self.line, self.text, self.tag = page, line, text, tag
        m = EXIT_TAG.match(tag or "")
        self.expect = int(m.group(1)) if m else 0
        self.runs = tag is None or m is not None
        self.seconds = None

    def where(self):
        return f"{self.page}:{self.line}"


def commands_of(page, text):
    """The commands of one page, and the convention errors in it."""
    commands, errors = [], []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if not m:
            if line.startswith("    ") and i > 0 and not lines[i - 1].strip() and line.strip():
                errors.append(f"{page}:{i + 1}: an indented code block: put commands in a ```sh block, "
                              "anything else in a ```text block")
            i += 1
            continue
        fence, lang = m.group(2), m.group(3).lower()
        start = i
        i += 1
        body = []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append((i + 1, lines[i]))
            i += 1
        if i == len(lines):
            errors.append(f"{page}:{start + 1}: a code block that never closes")
        i += 1
        if lang in SHELL_LANGS:
            errors.append(f"{page}:{start + 1}: a ```{lang} block: commands go in ```sh blocks (which the "
                          "guide test runs), output in ```text blocks")
        if lang != "sh":
            continue
        pending, first = "", None
        for number, raw in body:
            if not pending and (not raw.strip() or raw.lstrip().startswith("#")):
                continue
            if first is None:
                first = number
            if raw.rstrip().endswith("\\"):
                pending += raw.rstrip()[:-1] + " "
                continue
            full = (pending + raw).strip()
            pending = ""
            tag = None
            t = TAG.search(full)
            if t:
                tag = t.group(1).strip()
                if tag not in NOT_RUN and not EXIT_TAG.match(tag):
                    errors.append(f"{page}:{first}: unknown tag [{tag}]: use one of "
                                  + " ".join(f"[{k}]" for k in NOT_RUN) + " or [exit N]")
                    tag = None
            commands.append(Command(page, first, full, tag))
            first = None
        if pending:
            errors.append(f"{page}:{first}: the last command of the block ends in a backslash")
    return commands, errors


def pages_of(source):
    pages = [source / "README.md"] + sorted((source / "docs").glob("*.md"))
    return [p for p in pages if p.is_file()]


def syntax_errors(commands):
    """bash -n on every command, run or not: a command left out here still parses."""
    errors = []
    for c in commands:
        r = subprocess.run(["bash", "-n", "-c", c.text], capture_output=True, text=True)
        if r.returncode != 0:
            errors.append(f"{c.where()}: not valid shell: {c.text}\n    {r.stderr.strip()}")
    return errors


def source_files(source):
    """The source tree's files as a checkout has them: tracked or not ignored (no build/, data/, runs/)."""
    if (source / ".git").exists():
        r = subprocess.run(["git", "-C", str(source), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, check=True)
        return [n for n in r.stdout.decode().split("\0") if n and (source / n).is_file()]
    skip = {".git", "build", "data", "runs", ".gpu", ".whl"}
    return [str(p.relative_to(source)) for p in source.rglob("*")
            if p.is_file() and p.relative_to(source).parts[0] not in skip and "__pycache__" not in p.parts]


def make_base(source, binaries, scratch, images):
    base = scratch / "base"
    for name in source_files(source):
        dst = base / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, dst)
    bin_dir = base / "build" / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for program in ("fusetrain", "fusetrain-prep"):
        (bin_dir / program).symlink_to(binaries / program)
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import guide_fixture
    small = guide_fixture.make(base, source, FASHION_MNIST, images)
    return base, small


def environment(root, python):
    env = {k: v for k, v in os.environ.items() if k not in DROP_ENV}
    env.update(MPI_ENV)
    path = [str(root / "build" / "bin")]
    python = shutil.which(python) if python else None  # a name such as python3 is looked up on PATH
    if python:
        path.append(str(pathlib.Path(python).parent))
    env["PATH"] = ":".join(path + [os.environ.get("PATH", "/usr/bin:/bin")])
    env["MPLCONFIGDIR"] = str(root / ".matplotlib")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_page(page, commands, root, logs, env, substitutions, timeout):
    """Runs a page's commands in order in one bash; returns (failures, seconds)."""
    runnable = [c for c in commands if c.runs]
    logs.mkdir(parents=True, exist_ok=True)
    script = ["cd " + sh_quote(str(root))]
    for n, c in enumerate(runnable):
        text = c.text
        for a, b in substitutions:
            text = text.replace(a, b)
        out = sh_quote(str(logs / f"{n}.out"))
        script.append(f"t=$SECONDS\n{{\n{text}\n}} > {out} 2>&1 < /dev/null\n"
                      f"s=$?; echo \"{n} $s $((SECONDS - t))\" >> {sh_quote(str(logs / 'status'))}\n"
                      f"[ $s -eq {c.expect} ] || exit 0")
    (logs / "page.sh").write_text("\n".join(script) + "\n")
    started = time.monotonic()
    proc = subprocess.Popen(["bash", str(logs / "page.sh")], env=env, cwd=root, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    seconds = time.monotonic() - started
    status = {}
    if (logs / "status").exists():
        for line in (logs / "status").read_text().split("\n"):
            if line.strip():
                n, s, took = line.split()
                status[int(n)] = int(s)
                runnable[int(n)].seconds = int(took)
    failures = []
    for n, c in enumerate(runnable):
        if n not in status:
            why = (f"still running when the page's {timeout} s ran out" if timed_out and n == len(status)
                   else "the page's shell ended before it" if n == len(status) else None)
            if why:
                failures.append(report(c, why, logs / f"{n}.out", substitutions))
            break
        if status[n] != c.expect:
            failures.append(report(c, f"exit status {status[n]}, expected {c.expect}", logs / f"{n}.out",
                                   substitutions))
            break
    return failures, seconds


def report(command, why, out, substitutions):
    ran = command.text
    for a, b in substitutions:
        ran = ran.replace(a, b)
    text = [f"FAIL {command.where()}: {why}", f"    $ {command.text}"]
    if ran != command.text:
        text.append(f"    (ran as: {ran})")
    if out.exists():
        tail = out.read_text(errors="replace").splitlines()[-30:]
        text += ["    | " + t for t in tail]
    return "\n".join(text)


def project_python():
    """FUSETRAIN_PYTHON, else the environment tools/setup.sh makes (FUSETRAIN_CACHE or ~/.cache/fusetrain)."""
    if os.environ.get("FUSETRAIN_PYTHON"):
        return os.environ["FUSETRAIN_PYTHON"]
    cache = os.environ.get("FUSETRAIN_CACHE") or os.path.expanduser("~/.cache/fusetrain")
    venv = os.path.join(cache, "venv", "bin", "python")
    return venv if os.path.exists(venv) else ""


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def main():
    source = pathlib.Path(os.environ.get("FUSETRAIN_SOURCE") or pathlib.Path(__file__).resolve().parents[2])
    pages = pages_of(source)
    parsed, errors = {}, []
    for page in pages:
        rel = str(page.relative_to(source))
        parsed[rel], page_errors = commands_of(rel, page.read_text())
        errors += page_errors
    everything = [c for cs in parsed.values() for c in cs]
    errors += syntax_errors(everything)

    if "--list" in sys.argv[1:]:
        for c in everything:
            what = (f"not run [{c.tag}]: {NOT_RUN[c.tag]}" if not c.runs
                    else f"run, exit {c.expect}" if c.expect else "run")
            print(f"{c.where()}\t{what}\t{c.text}")
        for e in errors:
            print("ERROR " + e)
        return 1 if errors else 0

    if errors:
        print("FAIL: the guide breaks the conventions of docs/tests.md:")
        print("\n".join("  " + e for e in errors))
        return 1
    python = project_python()
    try:
        import PIL  # noqa: F401  (the small data's images)
    except ImportError:
        if python and shutil.which(python) and not os.environ.get("GUIDE_REEXEC"):
            os.environ["GUIDE_REEXEC"] = "1"  # once: a venv's python may resolve to this very interpreter
            os.execv(shutil.which(python), [python, __file__] + sys.argv[1:])
        print("FAIL: the small data needs pillow: run this with the project's Python (FUSETRAIN_PYTHON)")
        return 1
    binaries = pathlib.Path(os.environ["FUSETRAIN_BIN"])
    scratch = pathlib.Path(os.environ["FUSETRAIN_TMP"])
    images = int(os.environ.get("GUIDE_IMAGES", "512"))
    jobs = int(os.environ.get("GUIDE_JOBS", "2"))
    timeout = int(os.environ.get("GUIDE_PAGE_TIMEOUT", "300"))
    if not (pathlib.Path(FASHION_MNIST) / "train-images-idx3-ubyte.gz").exists():
        print(f"SKIP: Debian's dataset-fashion-mnist is not installed ({FASHION_MNIST})")
        return 77
    started = time.monotonic()
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    base, small = make_base(source, binaries, scratch, images)
    substitutions = [(FASHION_MNIST, str(small))]

    failures, lines = [], []
    first = "README.md"
    f, seconds = run_page(first, parsed[first], base, scratch / "logs" / "README.md",
                          environment(base, python), substitutions, timeout)
    failures += f
    lines.append(f"{'FAIL' if f else 'ok  '} {first}: {sum(c.runs for c in parsed[first])} commands, {seconds:.0f} s")
    wanted = os.environ.get("GUIDE_PAGES", "").split()
    rest = [p for p in parsed if p != first and (not wanted or p in wanted)]
    if f:
        lines.append(f"     the other {len(rest)} pages start from README.md's state: not run")
        rest = []

    def one(page):
        root = scratch / "pages" / page.replace("/", "_")
        shutil.copytree(base, root, symlinks=True)
        return page, run_page(page, parsed[page], root, scratch / "logs" / page, environment(root, python),
                              substitutions, timeout)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for page, (f, seconds) in pool.map(one, rest):
            failures += f
            lines.append(f"{'FAIL' if f else 'ok  '} {page}: {sum(c.runs for c in parsed[page])} commands, {seconds:.0f} s")

    print("\n".join(lines))
    skipped = [c for c in everything if not c.runs]
    print(f"\nNot run here ({len(skipped)} commands, marked in the guide):")
    for c in skipped:
        print(f"  {c.where()} [{c.tag}] {NOT_RUN[c.tag]}: {c.text}")
    timed = sorted((c for c in everything if c.seconds is not None), key=lambda c: -c.seconds)
    print("\nSlowest commands: " + ", ".join(f"{c.where()} {c.seconds} s" for c in timed[:6]))
    ran = sum(c.runs for p in [first] + rest for c in parsed[p])
    print(f"\n{ran} commands of {1 + len(rest)} pages run in {time.monotonic() - started:.0f} s "
          f"(scratch copy and logs: {scratch})")
    if failures:
        print("\n" + "\n\n".join(failures))
        print(f"\nFAIL: {len(failures)} page(s) with a failing command")
        return 1
    print("PASS: every command of the guide that runs here ran as shown")
    return 0


if __name__ == "__main__":
    sys.exit(main())
