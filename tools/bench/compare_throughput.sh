#!/usr/bin/env bash
# fusetrain's own training step rate next to the PyTorch coursework and tuned baselines on the same device,
# per model and batch size: prints a markdown table with the ratios, ready for tools/bench/RESULTS.md.
#
# Environment (defaults in brackets):
#   FUSETRAIN_BIN    the fusetrain executable [build/bin/fusetrain of this checkout]
#   PYTHON           a Python with torch, h5py, numpy [~/.cache/fusetrain/venv/bin/python, else python3]
#   DEVICE           cpu | cuda [cuda when torch sees a GPU]
#   MODELS, BATCHES  what to measure ["simple_cnn resnet18", "32 128 512"]
#   STEPS, WARMUP    timed and untimed steps per run [cuda: 100 and 20; cpu: 3 and 1]
#   TUNED_PRECISION  bf16 | fp16 | fp32 for the tuned style and for fusetrain [cuda: bf16; cpu: fp32]
#   DATA             a fusetrain-prep shard folder for the PyTorch input pipelines [synthetic images]
#   WORKERS          coursework DataLoader processes [2]
#   PYTORCH_ARGS     extra options for both PyTorch styles, e.g. --fixed-batch
#   LOG_DIR          where every run's full output goes [a new temporary folder]
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
DEVICE=${DEVICE:-$("$PYTHON" -c 'import torch; print("cuda" if torch.cuda.is_available() else "cpu")')}
case $DEVICE in
  cuda) steps=100 warmup=20 precision=bf16 compile=--compile ;;
  cpu) steps=3 warmup=1 precision=fp32 compile=--no-compile ;;
  *) echo "compare_throughput.sh: DEVICE must be cpu or cuda, not '$DEVICE'" >&2; exit 2 ;;
esac
MODELS=${MODELS:-simple_cnn resnet18}
BATCHES=${BATCHES:-32 128 512}
STEPS=${STEPS:-$steps}
WARMUP=${WARMUP:-$warmup}
TUNED_PRECISION=${TUNED_PRECISION:-$precision}
WORKERS=${WORKERS:-2}
LOG_DIR=${LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/compare_throughput.XXXXXX")}
mkdir -p "$LOG_DIR"
if [ ! -x "$FUSETRAIN_BIN" ]; then
  echo "compare_throughput.sh: $FUSETRAIN_BIN is not executable (set FUSETRAIN_BIN)" >&2
  exit 2
fi
if [ -n "${DATA:-}" ]; then source_args=(--data "$DATA"); images="shards in $DATA"; else
  source_args=(--synthetic); images="synthetic uint8 32x32x3"; fi
read -r -a extra_args <<< "${PYTORCH_ARGS:-}"

# Each run's output goes to LOG_DIR/<name>.log; each prints the run's images/s, or n/a when it failed.
rate() { echo "${1:-n/a}"; }

fusetrain_rate() {  # model batch
  local log=$LOG_DIR/fusetrain-$1-$2.log
  "$FUSETRAIN_BIN" bench step --model "$1" --ranks 1 --batch "$2" --device "$DEVICE" \
    --precision "$TUNED_PRECISION" --channels-last --steps "$STEPS" --warmup "$WARMUP" > "$log" 2>&1 || true
  rate "$(awk -F' *[|] *' '$2 == "1" { print $3 }' "$log")"
}

pytorch_rate() {  # style model batch [options]
  local log=$LOG_DIR/$1-$2-$3.log
  "$PYTHON" "$here/pytorch_baseline.py" --style "$1" --model "$2" --batch-size "$3" --device "$DEVICE" \
    --steps "$STEPS" --warmup "$WARMUP" "${source_args[@]}" "${@:4}" ${extra_args[@]+"${extra_args[@]}"} \
    > "$log" 2>&1 || true
  rate "$(sed -n 's/^images_per_s=\([0-9.]*\) .*/\1/p' "$log")"
}

device_name=$("$PYTHON" -c "import sys, torch; sys.path.insert(0, '$here'); import pytorch_baseline as b
print(b.device_name(torch.device('$DEVICE')))")
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "## Training throughput: fusetrain vs PyTorch"
echo
echo "$device_name ($DEVICE), $(date -u '+%Y-%m-%d %H:%M UTC'), host $(hostname), fusetrain commit $commit," \
  "torch $("$PYTHON" -c 'import torch; print(torch.__version__)'); $STEPS timed steps after $WARMUP warm-up, 1 rank."
echo
echo "- fusetrain: \`fusetrain bench step --model M --ranks 1 --batch B --device $DEVICE --precision" \
  "$TUNED_PRECISION --channels-last --steps $STEPS --warmup $WARMUP\` (the tuned style's precision and" \
  "memory format; one fixed device-resident batch: model, gradient engine, SGD)"
echo "- coursework: \`pytorch_baseline.py --style coursework\` (fp32 eager, DataLoader with $WORKERS workers," \
  "per-sample CPU augmentation) on $images${PYTORCH_ARGS:+, with $PYTORCH_ARGS}"
echo "- tuned: \`pytorch_baseline.py --style tuned --precision $TUNED_PRECISION $compile\` (device-resident" \
  "data, on-device augmentation, channels_last) on $images${PYTORCH_ARGS:+, with $PYTORCH_ARGS}"
echo
echo "| model | batch | fusetrain img/s | coursework img/s | tuned img/s | fusetrain/tuned | fusetrain/coursework |"
echo "|---|---|---|---|---|---|---|"
for model in $MODELS; do
  for batch in $BATCHES; do
    ours=$(fusetrain_rate "$model" "$batch")
    coursework=$(pytorch_rate coursework "$model" "$batch" --workers "$WORKERS")
    tuned=$(pytorch_rate tuned "$model" "$batch" --precision "$TUNED_PRECISION" "$compile")
    echo "| $model | $batch | $ours | $coursework | $tuned |" \
      "$(ratio "$ours" "$tuned") | $(ratio "$ours" "$coursework") |"
  done
done
echo
echo "Logs of every run: $LOG_DIR"
