# The mutation baseline's committed verdicts (tools/mutants/baseline.jsonl): a cache written out and read into an
# empty one gives back every verdict, a newer cache is not overwritten, and the committed ledger is well formed.
"""Usage: mutant_ledger.py SOURCE_DIR   (exits 1 naming what does not hold)"""
import hashlib
import json
import pathlib
import sys
import tempfile

SOURCE = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(SOURCE / "tools" / "mutants"))
import ledger  # noqa: E402

sha = lambda text: hashlib.sha256(text.encode()).hexdigest()
failures = []


def check(ok: bool, what: str) -> None:
    if not ok:
        failures.append(what)


def summary(path: str, when: str, rows: list) -> dict:
    return {"path": path, "sha": sha(path + when), "lines": 10, "generated": 5, "quota": 3, "built": True,
            "complete": True, "rows": rows, "when": when, "commit": "abc1234"}


def row(key: str, verdict: str, tests: list) -> dict:
    return {"key": key, "file": "src/a.cpp", "line": 3, "kind": "operator", "from": "a + b", "to": "a - b",
            "verdict": verdict, "by": "t", "tests_key": "k" + key, "tests": tests, "when": "2026-11-30 10:00:00"}


def write_cache(cache: pathlib.Path, summaries: list) -> None:
    for s in summaries:
        f = ledger.summary_file(cache, sha(s["path"]))
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(s))


def round_trip(tmp: pathlib.Path) -> None:
    tests = [["unit.a", "d1"], ["mpi.b", "d2"]]
    a = summary("src/a.cpp", "2026-11-30 10:00:00", [row("k1", "caught", tests), row("k2", "survived", tests)])
    gone = summary("src/gone.cpp", "2026-11-30 10:00:00", [row("k3", "invalid", [])])
    write_cache(tmp / "old", [a, gone])
    book = tmp / "baseline.jsonl"
    ledger.save(book, tmp / "old", ["src/a.cpp", "src/b.cpp"], sha)
    lines = book.read_text().splitlines()
    check(len(lines) == 1, f"the ledger keeps the tree's judged files only: {len(lines)} lines, 1 expected")
    check(not book.with_name(book.name + ".partial").exists(), "the ledger's partial file is left behind")
    kept = json.loads(lines[0])["rows"]
    check(all("tests" not in r for r in kept), "the list of tests reaching a line is kept (their digest decides)")
    check([r.get("tests_key") for r in kept] == ["kk1", "kk2"], "a verdict's test digest is not kept")
    check(ledger.restore(book, tmp / "new", sha) == 1, "an empty cache does not take the ledger's one summary")
    check(ledger.restore(book, tmp / "new", sha) == 0, "a cache as new as the ledger takes it again")
    for r in a["rows"]:
        got = json.loads((tmp / "new" / "results" / f"{r['key']}.json").read_text())
        check(got["verdict"] == r["verdict"] and got["tests_key"] == r["tests_key"],
              f"mutant {r['key']} comes back as {got.get('verdict')}")
    newer = summary("src/a.cpp", "2026-12-01 00:00:00", [])
    write_cache(tmp / "newer", [newer])
    check(ledger.restore(book, tmp / "newer", sha) == 0, "an older ledger entry overwrote the cache's newer one")
    check(ledger.restore(tmp / "absent.jsonl", tmp / "none", sha) == 0, "a missing ledger restores something")


def committed() -> None:
    book = ledger.DEFAULT
    paths = []
    for s in ledger.read(book):
        paths.append(s["path"])
        check((SOURCE / s["path"]).exists(), f"{book.name}: {s['path']} is not in the tree")
        for r in s["rows"]:
            check(r.get("verdict") in ledger.VERDICTS and r.get("file") == s["path"] and "key" in r,
                  f"{book.name}: {s['path']} line {r.get('line')}: a row without key, its file or a verdict")
    check(paths == sorted(set(paths)), f"{book.name}: files not in path order, or one twice")


with tempfile.TemporaryDirectory() as tmp:
    round_trip(pathlib.Path(tmp))
committed()
for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failures" if failures else "the ledger round-trips; the committed ledger is well formed")
sys.exit(1 if failures else 0)
