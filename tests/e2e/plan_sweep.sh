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

start=$(date +%s.%N)
sweep "$work/sweep.log" --sweep 4096,1048576,16777216,67108864 --iterations 5 --warmup 1 --fit "$work/link.json"
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
header="^all-reduce sweep, level intra: 2 ranks on 1 node(s), backend [a-z]*, the slowest rank's median of 5 "
header+="iterations$"
grep -q "$header" "$work/sweep.log" || fail "no header naming 2 ranks and 5 iterations"
[ "$(grep -c '^| [0-9]* | ring |' "$work/sweep.log")" = 4 ] || fail "expected a ring row per size"
! grep -q "^beside compute:" "$work/sweep.log" || fail "the plain sweep reported a compute load"
grep -q "^fit: alpha = [0-9.]* us (below the ring's size [0-9.]* us), beta = [0-9.]* ns/byte" "$work/sweep.log" ||
  fail "no fit line"
[ -s "$work/link.json" ] || fail "no link file"
# The machine's CPU per byte sent, counted on every core: some, and never more than the cores can have given in
# the sweep's wall time (5 all-reduces of each size counted, back to back after the timed ones).
grep -q "^machine CPU: [0-9.]* ns per byte a rank sends, on $(nproc) cores" "$work/sweep.log" ||
  fail "no machine CPU line on $(nproc) cores"
python3 - "$work/link.json" "$(nproc)" "$wall" "$work/sweep.log" << 'PY' || fail "the link file's machine CPU is wrong"
import json, re, sys
level = json.load(open(sys.argv[1]))["levels"]["intra"]
cores, wall = int(sys.argv[2]), float(sys.argv[3])
printed = float(re.search(r"^machine CPU: ([0-9.]+) ns", open(sys.argv[4]).read(), re.M).group(1))
assert abs(printed - level["cpu_s_per_byte"] * 1e9) <= 1e-4, (printed, level["cpu_s_per_byte"])
counted = sum(s["cpu_s"] * 5 for s in level["samples"])
assert level["cpu_cores"] == cores and level["cpu_s_per_byte"] > 0, level
# Counted in clock ticks (10 ms): a few all-reduces of 4 KiB can count none, the 64 MiB ones not.
assert all(s["cpu_s"] >= 0 for s in level["samples"]), level["samples"]
assert max(s["cpu_s"] for s in level["samples"]) > 0, level["samples"]
assert counted <= cores * wall, f"{counted} CPU seconds counted in {wall} s on {cores} cores"
print(f"machine CPU: {level['cpu_s_per_byte'] * 1e9:.3f} ns a byte; {counted:.2f} s counted in {wall:.2f} s")
PY

# Beside a busy thread per rank: said in the header and the file, the threads shown to have run, and no machine
# CPU counted (the load's would be in it).
sweep "$work/beside.log" --sweep 4096,16777216 --beside-compute 1 --iterations 3 --warmup 1 \
  --fit "$work/link-beside.json"
grep -q "^all-reduce sweep, level intra: .* median of 3 iterations, beside 1 busy thread(s) per rank$" \
  "$work/beside.log" || fail "no header naming the busy thread per rank"
grep -q "^beside compute: rank 0's 1 busy thread(s) made [1-9][0-9]* passes over their buffers meanwhile$" \
  "$work/beside.log" || fail "the busy thread made no pass"
! grep -q "^machine CPU:" "$work/beside.log" || fail "the sweep beside compute counted the machine's CPU"
python3 - "$work/link-beside.json" << 'PY' || fail "the link file beside compute is wrong"
import json, sys
level = json.load(open(sys.argv[1]))["levels"]["intra"]
assert level["beside_compute"] == 1, level["beside_compute"]
assert level["cpu_s_per_byte"] == 0 and all(s["cpu_s"] == -1 for s in level["samples"]), level
PY

# A count of busy threads below 0 is refused by name, before any rank sweeps.
if "$FUSETRAIN_BIN/fusetrain" bench allreduce --sweep --beside-compute -1 > "$work/negative.log" 2>&1; then
  fail "--beside-compute -1 was accepted"
fi
grep -qF -- "--beside-compute must be 0 or more busy threads per rank, not -1" "$work/negative.log" ||
  { cat "$work/negative.log"; fail "unclear --beside-compute error"; }

# MPI's own all-reduce at every size, without warm-up: recursive doubling's rows only, no ring.
sweep "$work/native.log" --sweep 4096,16777216 --mpi-algorithm native --iterations 3 --warmup 0
[ "$(grep -c '^| [0-9]* | ring |' "$work/native.log")" = 0 ] ||
  fail "the native sweep ran the ring"
[ "$(grep -c '^| [0-9]* | doubling |' "$work/native.log")" = 2 ] || fail "the native sweep should measure both sizes"
echo PASS
