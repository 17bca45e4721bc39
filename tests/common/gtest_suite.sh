#!/usr/bin/env bash
# Runs one GoogleTest suite as a ctest test: the binary's own exit status, except that a suite whose every test
# skipped (GTEST_SKIP) exits 77, ctest's skip code, so skips still show as skips and never hide a failure.
# usage: gtest_suite.sh BINARY FILTER
set -uo pipefail
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$1" --gtest_filter="$2" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}
if [ "$status" -eq 0 ] && grep -q '^\[  PASSED  \] 0 tests' "$out" && grep -q '^\[  SKIPPED \] [1-9]' "$out"; then
  exit 77
fi
exit "$status"
