#!/usr/bin/env bash
# What distributed.reproducible costs on the CPU: training images/s of the same run with and without it,
# at 1 and 2 ranks and two per-rank batches, micro_batches = ranks (the same work a step), interleaved
# rounds, medians; and the bytes a step sends (int64 sums against the fp32 buckets). One table for RESULTS.md.
#
# usage: tools/bench/reproducible.sh
# Environment (defaults in brackets):
#   FUSETRAIN_BIN  the fusetrain executable [build/bin/fusetrain]   MPIRUN  launcher [mpirun --oversubscribe ...]
#   RANKS ["1 2"], BATCHES ["32 128"] (per rank), REPEATS [3], IMAGES (training images) [4000]
#   THREADS        CPU threads per rank [1]          LOG_DIR  every run's output [a new temporary folder]
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
RANKS=${RANKS:-1 2}
BATCHES=${BATCHES:-32 128}
REPEATS=${REPEATS:-3}
IMAGES=${IMAGES:-4000}
THREADS=${THREADS:-1}
MPIRUN=${MPIRUN:-mpirun --oversubscribe --bind-to none $( [ "$(id -u)" = 0 ] && echo --allow-run-as-root)}
LOG_DIR=${LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/reproducible.XXXXXX")}
data=$LOG_DIR/data
[ -d "$data" ] || "$(dirname "$FUSETRAIN_BIN")/fusetrain-prep" --format idx --input /usr/share/datasets/fashion-mnist \
  --output "$data" --shards 2 --limit "$IMAGES" > /dev/null

# images_per_s RANKS BATCH MODE ROUND: one run's training images/s (its results file's summary).
images_per_s() {
  local name=r$1_b$2_$3_$4 sets=()
  [ "$3" = exact ] && sets=(--set distributed.reproducible=true --set "distributed.micro_batches=$1")
  cat > "$LOG_DIR/$name.yaml" <<YAML
model: {name: simple_cnn}
data: {path: $data, batch_size: $2, shuffle: global, limit_test: 500}
train: {epochs: 2, threads: $THREADS, seed: 1, device: cpu}
output: {dir: $LOG_DIR/runs, name: $name, save_model: false}
YAML
  # shellcheck disable=SC2086
  $MPIRUN -np "$1" "$FUSETRAIN_BIN" train --config "$LOG_DIR/$name.yaml" "${sets[@]}" > "$LOG_DIR/$name.log" 2>&1
  "$FUSETRAIN_BIN" inspect "$LOG_DIR/runs/$name.h5" /summary/images_per_s
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A results
for round in $(seq 1 "$REPEATS"); do
  for ranks in $RANKS; do
    for batch in $BATCHES; do
      for mode in default exact; do
        results[$ranks.$batch.$mode]+="$(images_per_s "$ranks" "$batch" "$mode" "$round") "
      done
    done
  done
done
echo "distributed.reproducible against the default, simple_cnn on Fashion-MNIST ($IMAGES images, 2 epochs), $THREADS"\
  "thread(s) per rank, micro_batches = ranks, medians of $REPEATS interleaved rounds; $(date -u '+%Y-%m-%d')"
echo
echo "| ranks | batch per rank | default img/s | reproducible img/s | reproducible / default | bytes sent a step: default / reproducible |"
echo "|---|---|---|---|---|---|"
params=390410  # simple_cnn's parameters on 28x28x1 images
for ranks in $RANKS; do
  for batch in $BATCHES; do
    d=$(tr ' ' '\n' <<< "${results[$ranks.$batch.default]}" | grep . | median)
    e=$(tr ' ' '\n' <<< "${results[$ranks.$batch.exact]}" | grep . | median)
    bytes="-"
    [ "$ranks" -gt 1 ] && bytes="$((params * 4 / 1024)) KiB / $((params * 8 / 1024)) KiB"
    echo "| $ranks | $batch | $d | $e | $(ratio "$e" "$d") | $bytes |"
  done
done
echo
echo "logs: $LOG_DIR"
