# Every ctest test of the build has a name of its own: two GoogleTest suites of one name in two test binaries
# make `ctest -R` run both and tools that pick tests by name (tools/mutants) judge with the wrong one.
"""Usage: unique_test_names.py BUILD_DIR   (exits 1 naming each name listed more than once)"""
import collections
import json
import subprocess
import sys

listing = subprocess.run(["ctest", "--show-only=json-v1"], cwd=sys.argv[1], capture_output=True, text=True, check=True)
tests = json.loads(listing.stdout)["tests"]
names = [test["name"] for test in tests]
repeated = {name: count for name, count in collections.Counter(names).items() if count > 1}
for name, count in sorted(repeated.items()):
    commands = [" ".join(t.get("command", [])[-2:]) for t in tests if t["name"] == name]
    print(f"FAIL: ctest lists '{name}' {count} times ({', '.join(commands)}): rename one suite")
if repeated:
    sys.exit(1)
print(f"{len(names)} tests, each name once")
