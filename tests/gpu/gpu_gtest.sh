#!/usr/bin/env bash
# Runs GoogleTest cases that exercise CUDA code, as a GPU-suite entry: skipped (77) with the reason when
# no CUDA device is visible; where one is, failed when the build lacks CUDA, a selected case skips or none
# runs. The binary's scratch folder is the case's own (FT_TEST_TMP, read at run time).
# usage: gpu_gtest.sh BINARY FILTER
set -euo pipefail
# shellcheck source=tests/gpu/lib.sh
source "$(dirname "$0")/lib.sh"
require_gpus 1
CASE=gtest
OUT=$WORK/gtest.log
export FT_TEST_TMP=$WORK/scratch
mkdir -p "$FT_TEST_TMP"
if [ -n "$REHEARSAL" ]; then  # up to the first CUDA call: the binary starts and selects its cases
  "$1" --gtest_list_tests --gtest_filter="$2" > "$OUT" 2>&1 || ft_fail "rehearsal: $1 does not start"
  [ "$(grep -c '^  ' "$OUT")" -gt 0 ] || ft_fail "rehearsal: the filter $2 selects no case of $1"
  echo "PASS [rehearsal gtest]: ready before the first CUDA call: $1, $(grep -c '^  ' "$OUT") cases, temp $FT_TEST_TMP"
  exit 0
fi
set +e
"$1" --gtest_filter="$2" > "$OUT" 2>&1
STATUS=$?
set -e
expect_status 0
expect_no_message "^\[  SKIPPED \]"
expect_message "^\[  PASSED  \] [1-9][0-9]* test"
pass
