#!/usr/bin/env bash
# The link sweep of e2e.plan on 2 ranks into a link file, alone on the machine (RUN_SERIAL): its fit needs the
# larger sizes' times to grow with the size, which other tests' processes on the same cores can hide.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}"
work=$FUSETRAIN_TMP/plan-link
rm -rf "$work" && mkdir -p "$work"
# shellcheck disable=SC2206
mpirun=($FUSETRAIN_MPIRUN)
"${mpirun[@]}" -np 2 "$FUSETRAIN_BIN/fusetrain" bench allreduce --sweep 4096,1048576,16777216,67108864 \
  --iterations 5 --warmup 1 --level intra --fit "$work/link.json" | tee "$work/sweep.log"
grep -q "^fit: alpha = [0-9.]* us (below the ring's size [0-9.]* us), beta = [0-9.]* ns/byte" "$work/sweep.log" ||
  { echo "FAIL: no fit line" >&2; exit 1; }
echo PASS
