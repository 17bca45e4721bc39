#!/usr/bin/env bash
# The link sweep of e2e.plan on 2 ranks into a link file, alone on the machine (RUN_SERIAL): its fit needs the
# larger sizes' times to grow with the size, which other processes on the same cores can hide. Then the sweep
# of MPI's own all-reduce alone (--mpi-algorithm native).
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}"
work=$FUSETRAIN_TMP/plan-link
rm -rf "$work" && mkdir -p "$work"
# shellcheck disable=SC2206
mpirun=($FUSETRAIN_MPIRUN)
fail() { echo "FAIL: $*" >&2; exit 1; }

# sweep LOG ARGS...: a 2-rank sweep into LOG, up to 3 tries: a machine loaded from outside can still make a
# 16 MiB all-reduce's median as slow as a 64 MiB one's, and refusing that fit is the sweep's right answer, not a
# failure of it. Any other error fails at once.
sweep() {
  local log=$1 try
  shift
  for try in 1 2 3; do
    if "${mpirun[@]}" -np 2 "$FUSETRAIN_BIN/fusetrain" bench allreduce --level intra "$@" > "$log" 2>&1; then
      cat "$log"
      return 0
    fi
    cat "$log"
    grep -qF "the link sweep's times do not grow with the message size" "$log" && [ "$try" -lt 3 ] ||
      fail "the sweep failed (try $try)"
    echo "the fit was refused on a loaded machine (try $try): sweeping again"
  done
}

sweep "$work/sweep.log" --sweep 4096,1048576,16777216,67108864 --iterations 5 --warmup 1 --fit "$work/link.json"
grep -q "^all-reduce sweep, level intra: 2 ranks on 1 node(s), backend [a-z]*, the slowest rank's median of 5 iterations" \
  "$work/sweep.log" || fail "no header naming 2 ranks and 5 iterations"
[ "$(grep -c '^| [0-9]* | ring |' "$work/sweep.log")" = 4 ] || fail "expected a ring row per size"
grep -q "^fit: alpha = [0-9.]* us (below the ring's size [0-9.]* us), beta = [0-9.]* ns/byte" "$work/sweep.log" ||
  fail "no fit line"
[ -s "$work/link.json" ] || fail "no link file"

# MPI's own all-reduce at every size: recursive doubling's rows only, no ring.
sweep "$work/native.log" --sweep 4096,16777216 --mpi-algorithm native --iterations 3 --warmup 1
[ "$(grep -c '^| [0-9]* | ring |' "$work/native.log")" = 0 ] ||
  fail "the native sweep ran the ring"
[ "$(grep -c '^| [0-9]* | doubling |' "$work/native.log")" = 2 ] || fail "the native sweep should measure both sizes"
echo PASS
