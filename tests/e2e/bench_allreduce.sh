#!/usr/bin/env bash
# bench allreduce's engine variant on one rank: the bucket limits given reach the engine (the header and each
# bucket's bytes in the timeline, checked against the limits here), and every bucket is all-reduced in every
# warm-up and timed run although one rank has nothing to exchange.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}"
work=$FUSETRAIN_TMP/bench_allreduce
rm -rf "$work" && mkdir -p "$work"
# shellcheck disable=SC2206
mpirun=($FUSETRAIN_MPIRUN)
"${mpirun[@]}" -np 1 "$FUSETRAIN_BIN/fusetrain" bench allreduce --model simple_cnn --device cpu --bucket-mib 0.25 \
  --first-bucket-mib 0.1 --last-bucket-mib 0.05 --warmup 1 --iterations 2 --timeline "$work/timeline.json" |
  tee "$work/bench.log"
header=$(head -n 1 "$work/bench.log")
buckets=$(sed -n 's/.* \([0-9]*\) buckets (0.25 MiB, first 0.1 MiB, last at most 0.05 MiB), median of 2$/\1/p' <<< "$header")
[ -n "$buckets" ] || { echo "FAIL: the header does not carry the limits given: $header" >&2; exit 1; }
# Each all-reduce in the timeline: its bucket and bytes (the engine adds a 4-byte status element per bucket).
sed -n 's/.*"name":"allreduce b\([0-9]*\)".*"bytes":\([0-9]*\),.*"tensors":\([0-9]*\).*/\1 \2 \3/p' "$work/timeline.json" \
  > "$work/allreduces.txt"
awk -v buckets="$buckets" -v runs=3 '
  { count[$1]++; bytes[$1] = $2 - 4; tensors[$1] = $3 }
  END {
    if (NR != buckets * runs) { printf "FAIL: %d all-reduces, expected %d buckets x %d runs\n", NR, buckets, runs; exit 1 }
    for (b = 0; b < buckets; b++) if (count[b] != runs) { printf "FAIL: bucket %d all-reduced %d times\n", b, count[b]; exit 1 }
    limit[0] = 0.1; limit[buckets - 1] = 0.05
    for (b = 0; b < buckets; b++) {
      mib = (b in limit) ? limit[b] : 0.25
      if (bytes[b] > mib * 1048576 && tensors[b] > 1) { printf "FAIL: bucket %d holds %d bytes in %d tensors, over %g MiB\n", b, bytes[b], tensors[b], mib; exit 1 }
    }
    printf "PASS: %d buckets, each all-reduced in each of %d runs, within its limit\n", buckets, runs
  }' "$work/allreduces.txt"
