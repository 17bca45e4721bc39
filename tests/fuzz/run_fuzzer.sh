#!/usr/bin/env bash
# Runs one fuzz target for a bounded time on its seed corpus (read-only: new inputs go to a work folder).
# Any crash, sanitizer report, non-ft::Error exception, leak, timeout or >2 GB allocation fails the test.
set -euo pipefail
fuzzer=${1:?usage: run_fuzzer.sh FUZZER CORPUS_DIR WORK_DIR SECONDS}
corpus=${2:?}
work=${3:?}
seconds=${4:?}
[ -x "$fuzzer" ] || { echo "FAIL: $fuzzer was not built (see the fuzz.build test)"; exit 1; }
rm -rf "$work" && mkdir -p "$work/new" "$work/artifacts"
export TMPDIR=$work  # the targets' scratch folders
status=0
"$fuzzer" "$work/new" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 > "$work/fuzz.log" 2>&1 || status=$?
grep -E "^(#[0-9]+ +DONE|Done|stat::number_of_executed_units)" "$work/fuzz.log" | tail -n 2 || true
if [ "$status" -ne 0 ]; then
  grep -E -A 25 "FUZZ FINDING|ERROR: (AddressSanitizer|libFuzzer|UndefinedBehaviorSanitizer|LeakSanitizer)|runtime error" \
    "$work/fuzz.log" | head -n 60 || tail -n 40 "$work/fuzz.log"
  for artifact in "$work"/artifacts/*; do
    [ -e "$artifact" ] || continue
    echo "reproduce: FT_FUZZ_VERBOSE=1 $fuzzer $artifact"
  done
  echo "FAIL: $(basename "$fuzzer") exited with status $status"
  exit 1
fi
echo "PASS: $(basename "$fuzzer") ran ${seconds} s without a finding"
