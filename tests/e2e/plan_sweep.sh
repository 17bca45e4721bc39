#!/usr/bin/env bash
# The link sweep of e2e.plan on 2 ranks into a link file, alone on the machine (RUN_SERIAL): its fit needs the
# larger sizes' times to grow with the size, which other processes on the same cores can hide.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}"
work=$FUSETRAIN_TMP/plan-link
rm -rf "$work" && mkdir -p "$work"
# shellcheck disable=SC2206
mpirun=($FUSETRAIN_MPIRUN)
refused="the link sweep's times do not grow with the message size"
# Up to 3 tries: a machine loaded from outside can still make a 16 MiB all-reduce's median as slow as a 64 MiB
# one's, and refusing that fit is the sweep's right answer, not a failure of it. Any other error fails at once.
for try in 1 2 3; do
  if "${mpirun[@]}" -np 2 "$FUSETRAIN_BIN/fusetrain" bench allreduce --sweep 4096,1048576,16777216,67108864 \
    --iterations 5 --warmup 1 --level intra --fit "$work/link.json" > "$work/sweep.log" 2>&1; then
    break
  fi
  cat "$work/sweep.log"
  grep -qF "$refused" "$work/sweep.log" && [ "$try" -lt 3 ] || { echo "FAIL: the sweep failed (try $try)" >&2; exit 1; }
  echo "the fit was refused on a loaded machine (try $try): sweeping again"
done
cat "$work/sweep.log"
grep -q "^all-reduce sweep, level intra: 2 ranks on 1 node(s), backend [a-z]*, the slowest rank's median of 5 iterations" \
  "$work/sweep.log" || { echo "FAIL: no header naming 2 ranks and 5 iterations" >&2; exit 1; }
[ "$(grep -c '^| [0-9]* | ring |' "$work/sweep.log")" = 4 ] || { echo "FAIL: expected a ring row per size" >&2; exit 1; }
grep -q "^fit: alpha = [0-9.]* us (below the ring's size [0-9.]* us), beta = [0-9.]* ns/byte" "$work/sweep.log" ||
  { echo "FAIL: no fit line" >&2; exit 1; }
[ -s "$work/link.json" ] || { echo "FAIL: no link file" >&2; exit 1; }
echo PASS
