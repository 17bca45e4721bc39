#!/usr/bin/env bash
# Smoke test of tools/bench/cpu_precision.sh at its tiniest: fusetrain and PyTorch (eager at 1 rank, DDP under
# torchrun at 2) each run once per cell, and the table must have every row, rate and ratio in place.
set -euo pipefail
: "${FUSETRAIN_BIN_DIR:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_PYTHON:?}"
"$FUSETRAIN_PYTHON" -c "import h5py, numpy, torch.distributed.run" 2> /dev/null ||
  { echo "SKIP: $FUSETRAIN_PYTHON lacks torch (with torchrun), h5py or numpy"; exit 77; }
work=$FUSETRAIN_TMP/cpu_precision
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

FUSETRAIN_BIN=$FUSETRAIN_BIN_DIR/fusetrain PYTHON=$FUSETRAIN_PYTHON MODELS=simple_cnn BATCHES=8 RANKS="1 2" \
  SETTINGS="fp32_nchw bf16_cl" REPEATS=1 STEPS=1 WARMUP=1 LOG_DIR=$work/logs \
  bash "$FUSETRAIN_SOURCE/tools/bench/cpu_precision.sh" > "$work/table.md" 2> "$work/progress.log" ||
  { cat "$work/table.md" "$work/progress.log"; fail "cpu_precision.sh failed"; }
cat "$work/table.md"

grep -qE '^- CPU: .*avx512_bf16: (yes|no), amx_bf16: (yes|no); fusetrain info: `CPU: ' "$work/table.md" ||
  fail "the header does not name the CPU's bf16 features and fusetrain info's CPU line"
columns='| batch | ranks | setting | fusetrain img/s | PyTorch (eager or DDP) img/s | fusetrain / PyTorch |'
grep -qxF "$columns vs fusetrain fp32 NCHW |" "$work/table.md" || fail "no table header"
# One row per ranks x setting, each with two rates, the ratio of the rates and the ratio to fp32 NCHW.
number='[0-9]+(\.[0-9]+)?'
rows=(
  "8 1 fp32 NCHW eager" "8 1 bf16 channels_last eager" "8 2 fp32 NCHW DDP" "8 2 bf16 channels_last DDP"
)
for row in "${rows[@]}"; do
  read -r batch ranks precision layout kind <<< "$row"
  cells="$number \| $number \($kind\) \| $number \| $number"
  line=$(grep -E "^\| $batch \| $ranks \| $precision $layout \| $cells \|$" "$work/table.md") ||
    fail "no complete row for batch $batch, $ranks rank(s), $precision $layout ($kind)"
  awk -F' *[|] *' '{ split($6, theirs, " "); want = sprintf("%.2f", $5 / theirs[1]); exit !($7 == want) }' \
    <<< "$line" || fail "fusetrain / PyTorch is not the ratio of the rates in: $line"
  [ "$layout" != NCHW ] || grep -qE '\| 1\.00 \|$' <<< "$line" || fail "fp32 NCHW is not 1.00 of itself: $line"
done
# The DDP runs are 2 processes in one gloo group: rank 0 reports world_size=2.
for log in "$work"/logs/pytorch-simple_cnn-b8-r2-*.log; do
  grep -qE '^images_per_s=[0-9.]+ style=tuned .* world_size=2 ' "$log" || fail "$log: no 2-rank DDP result"
done
[ "$(wc -l < "$work/logs/results.tsv")" = 8 ] || fail "expected 8 runs in results.tsv"
# --ddp outside torchrun is refused with the way to start it, not run as a world of one.
if "$FUSETRAIN_PYTHON" "$FUSETRAIN_SOURCE/tools/bench/pytorch_baseline.py" --style tuned --synthetic --ddp \
  --device cpu > "$work/no_torchrun.log" 2>&1; then fail "--ddp without torchrun's environment ran"; fi
grep -q 'error: --ddp runs under torchrun' "$work/no_torchrun.log" || fail "no clear error for --ddp without torchrun"
echo "PASS: 4 rows, 8 runs, DDP at 2 ranks"
