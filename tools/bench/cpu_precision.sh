#!/usr/bin/env bash
# fusetrain and PyTorch side by side on the CPU in fp32 NCHW, fp32 channels_last and bf16 channels_last, at
# 1 rank (PyTorch eager) and several (PyTorch DDP over gloo): one markdown table per model for RESULTS.md.
#
# Environment (defaults in brackets):
#   FUSETRAIN_BIN    the fusetrain executable [build/bin/fusetrain of this checkout]
#   PYTHON           a Python with torch, h5py, numpy [~/.cache/fusetrain/venv/bin/python, else python3];
#                    its torch.distributed.run (torchrun) starts the DDP runs
#   MODELS, BATCHES  what to measure ["simple_cnn resnet18", "32 128"]; BATCHES is per rank
#   RANKS            world sizes ["1 2"]: 1 = PyTorch eager, N > 1 = torchrun --nproc-per-node N ... --ddp
#   SETTINGS         any of fp32_nchw fp32_cl bf16_cl (fp32 NCHW, fp32 channels_last, bf16 autocast with
#                    channels_last) [all three]
#   THREADS          CPU threads per rank, both sides [1]
#   BACKEND          fusetrain's gradient backend, mpi | gloo [mpi]
#   REPEATS          interleaved rounds over every cell (A B C A B C ...); the table shows medians [3]
#   STEPS, WARMUP    timed and untimed steps of every run [per model: simple_cnn 10 and 2, resnet18 1 and 1,
#                    others 3 and 1]
#   LOG_DIR          where every run's full output goes [a new temporary folder]
#   ONEDNN_MAX_CPU_ISA, ATEN_CPU_CAPABILITY  passed to every run when set (e.g. AVX2 / avx2: no bf16 units)
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
MODELS=${MODELS:-simple_cnn resnet18}
BATCHES=${BATCHES:-32 128}
RANKS=${RANKS:-1 2}
THREADS=${THREADS:-1}
BACKEND=${BACKEND:-mpi}
REPEATS=${REPEATS:-3}
LOG_DIR=${LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/cpu_precision.XXXXXX")}
mkdir -p "$LOG_DIR"
[ -n "${ONEDNN_MAX_CPU_ISA:-}" ] && export ONEDNN_MAX_CPU_ISA
[ -n "${ATEN_CPU_CAPABILITY:-}" ] && export ATEN_CPU_CAPABILITY
if [ ! -x "$FUSETRAIN_BIN" ]; then
  echo "cpu_precision.sh: $FUSETRAIN_BIN is not executable (set FUSETRAIN_BIN)" >&2
  exit 2
fi
"$PYTHON" -c "import torch.distributed.run, h5py, numpy" 2> /dev/null ||
  { echo "cpu_precision.sh: $PYTHON lacks torch (with torch.distributed.run), h5py or numpy (set PYTHON)" >&2; exit 2; }
[[ $REPEATS =~ ^[1-9][0-9]*$ ]] || { echo "cpu_precision.sh: REPEATS must be a positive integer" >&2; exit 2; }

read -r -a SETTINGS <<< "${SETTINGS:-fp32_nchw fp32_cl bf16_cl}"
declare -A LABEL=([fp32_nchw]="fp32 NCHW" [fp32_cl]="fp32 channels_last" [bf16_cl]="bf16 channels_last")
declare -A FUSETRAIN_ARGS=([fp32_nchw]="--precision fp32" [fp32_cl]="--precision fp32 --channels-last"
                           [bf16_cl]="--precision bf16 --channels-last")
declare -A PYTORCH_ARGS=([fp32_nchw]="--precision fp32 --no-channels-last" [fp32_cl]="--precision fp32 --channels-last"
                         [bf16_cl]="--precision bf16 --channels-last")

for setting in "${SETTINGS[@]}"; do
  [ -n "${LABEL[$setting]:-}" ] ||
    { echo "cpu_precision.sh: SETTINGS: '$setting' is none of ${!LABEL[*]}" >&2; exit 2; }
done

steps_for() {  # model -> "timed warm-up"
  local steps=3 warmup=1
  case $1 in
    simple_cnn) steps=10 warmup=2 ;;
    resnet18) steps=1 warmup=1 ;;
  esac
  echo "${STEPS:-$steps} ${WARMUP:-$warmup}"
}

# Each run appends "model batch ranks setting side rate" to results.tsv (rate n/a when it failed) and
# leaves its full output in LOG_DIR/<side>-<model>-b<batch>-r<ranks>-<setting>-<round>.log.
fusetrain_run() {  # model batch ranks setting round
  local log=$LOG_DIR/fusetrain-$1-b$2-r$3-$4-$5.log steps warmup
  read -r steps warmup <<< "$(steps_for "$1")"
  # shellcheck disable=SC2086  # the setting's options are words
  "$FUSETRAIN_BIN" bench step --device cpu --model "$1" --batch "$2" --ranks "$3" --threads "$THREADS" \
    --backend "$BACKEND" --steps "$steps" --warmup "$warmup" ${FUSETRAIN_ARGS[$4]} > "$log" 2>&1 || true
  awk -F' *[|] *' -v r="$3" '$2 == r { print $3 }' "$log"
}

pytorch_run() {  # model batch ranks setting round
  local log=$LOG_DIR/pytorch-$1-b$2-r$3-$4-$5.log steps warmup launcher=() ddp=()
  read -r steps warmup <<< "$(steps_for "$1")"
  if [ "$3" -gt 1 ]; then
    launcher=(-m torch.distributed.run --standalone --nproc-per-node "$3") ddp=(--ddp)
  fi
  # shellcheck disable=SC2086
  "$PYTHON" "${launcher[@]}" "$here/pytorch_baseline.py" "${ddp[@]}" --style tuned --device cpu --no-compile \
    --fixed-batch --synthetic --synthetic-images $(($2 * $3 * 2)) --model "$1" --batch-size "$2" \
    --threads "$THREADS" --steps "$steps" --warmup "$warmup" ${PYTORCH_ARGS[$4]} > "$log" 2>&1 || true
  sed -n "s/^images_per_s=\([0-9.]*\) .* world_size=$3 .*/\1/p" "$log"
}

cells() {  # every "model batch ranks setting", in measuring order
  local model batch ranks setting
  for model in $MODELS; do for batch in $BATCHES; do for ranks in $RANKS; do for setting in "${SETTINGS[@]}"; do
    echo "$model $batch $ranks $setting"
  done; done; done; done
}

# Seconds the whole script should take on a quiet machine: start-up per process plus the steps at a
# guessed per-rank rate (simple_cnn 800 img/s, resnet18 35, others 100 with one thread).
estimate() {
  cells | while read -r model batch ranks _; do echo "$model $batch $ranks $(steps_for "$model")"; done |
    awk -v repeats="$REPEATS" -v threads="$THREADS" '{
      rate = ($1 == "simple_cnn" ? 800 : $1 == "resnet18" ? 35 : 100) * threads
      start = 1.5 + 0.5 * $3 + ($3 > 1 ? 5 : 3)
      total += start + 2 * ($4 + $5) * $2 / rate
    } END { printf "%d", total * repeats }'
}

measure() {  # all rounds into LOG_DIR/results.tsv, with progress on stderr
  local total=$(( $(cells | wc -l) * 2 * REPEATS )) done=0 round model batch ranks setting rate side begin
  : > "$LOG_DIR/results.tsv"
  echo "cpu_precision.sh: $total runs, estimated $(( ($(estimate) + 59) / 60 )) min on a quiet machine" \
    "(guessed rates); logs in $LOG_DIR" >&2
  begin=$SECONDS
  for round in $(seq 1 "$REPEATS"); do
    while read -r model batch ranks setting; do
      for side in fusetrain pytorch; do
        rate=$("${side}_run" "$model" "$batch" "$ranks" "$setting" "$round" < /dev/null)
        echo "$model $batch $ranks $setting $side ${rate:-n/a}" >> "$LOG_DIR/results.tsv"
        done=$((done + 1))
        echo "[$done/$total] round $round $side $model batch $batch ranks $ranks ${LABEL[$setting]}: ${rate:-n/a}" >&2
      done
    done < <(cells)
    if [ "$round" = 1 ]; then
      echo "cpu_precision.sh: round 1 took $((SECONDS - begin)) s; about $(( (SECONDS - begin) * (REPEATS - 1) ))" \
        "s to go" >&2
    fi
  done
}

median() {  # model batch ranks setting side -> median rate of its rounds, n/a when none succeeded
  awk -v key="$*" '$1" "$2" "$3" "$4" "$5 == key && $6 != "n/a" { print $6 }' "$LOG_DIR/results.tsv" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2];
                              else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

model_table() {  # model
  local batch ranks setting ours theirs base
  echo "### $1"
  echo
  echo "| batch | ranks | setting | fusetrain img/s | PyTorch (eager or DDP) img/s | fusetrain / PyTorch |" \
    "vs fusetrain fp32 NCHW |"
  echo "|---|---|---|---|---|---|---|"
  for batch in $BATCHES; do for ranks in $RANKS; do
    base=$(median "$1" "$batch" "$ranks" fp32_nchw fusetrain)
    for setting in "${SETTINGS[@]}"; do
      ours=$(median "$1" "$batch" "$ranks" "$setting" fusetrain)
      theirs=$(median "$1" "$batch" "$ranks" "$setting" pytorch)
      echo "| $batch | $ranks | ${LABEL[$setting]} | $ours | $theirs $([ "$ranks" -gt 1 ] && echo "(DDP)" ||
        echo "(eager)") | $(ratio "$ours" "$theirs") | $(ratio "$ours" "$base") |"
    done
  done; done
  echo
}

yes_no() { grep -qw "$1" /proc/cpuinfo && echo yes || echo no; }

header() {
  local cpu info steps
  cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
  info=$("$FUSETRAIN_BIN" info 2> /dev/null || true)
  steps=$(for model in $MODELS; do read -r s w <<< "$(steps_for "$model")"; echo "$model $s after $w"; done |
    paste -sd, - | sed 's/,/, /g')
  echo "## CPU training throughput by precision: fusetrain vs PyTorch"
  echo
  echo "- CPU: ${cpu:-unknown} ($(nproc) logical CPUs); avx512_bf16: $(yes_no avx512_bf16), amx_bf16:" \
    "$(yes_no amx_bf16); fusetrain info: \`$(grep '^CPU:' <<< "$info" || echo 'CPU: n/a')\`"
  echo "- ISA limits: ONEDNN_MAX_CPU_ISA=${ONEDNN_MAX_CPU_ISA:-unset}," \
    "ATEN_CPU_CAPABILITY=${ATEN_CPU_CAPABILITY:-unset} (every run)"
  echo "- $(date -u '+%Y-%m-%d %H:%M UTC'), host $(hostname), $(head -n 1 <<< "$info"), torch" \
    "$("$PYTHON" -c 'import torch; print(torch.__version__)')"
  echo "- Command: \`MODELS=\"$MODELS\" BATCHES=\"$BATCHES\" RANKS=\"$RANKS\" SETTINGS=\"${SETTINGS[*]}\"" \
    "THREADS=$THREADS BACKEND=$BACKEND REPEATS=$REPEATS${STEPS:+ STEPS=$STEPS}${WARMUP:+ WARMUP=$WARMUP}" \
    "tools/bench/cpu_precision.sh\`"
  echo "- Timed steps after warm-up: $steps; median of $REPEATS interleaved rounds; $THREADS thread(s) per rank;" \
    "batch is per rank, img/s over all ranks (ranks x batch x steps / slowest rank's seconds)"
  echo "- fusetrain: \`fusetrain bench step --device cpu --threads $THREADS --ranks R --batch B --backend $BACKEND\`" \
    "with \`--precision fp32\` | \`--precision fp32 --channels-last\` | \`--precision bf16 --channels-last\`"
  echo "- PyTorch: \`pytorch_baseline.py --style tuned --device cpu --no-compile --fixed-batch --synthetic" \
    "--threads $THREADS\` with \`--precision fp32 --no-channels-last\` | \`--precision fp32 --channels-last\` |" \
    "\`--precision bf16 --channels-last\` (autocast); eager at 1 rank, at R > 1 under" \
    "\`torchrun --standalone --nproc-per-node R\` with \`--ddp\` (DistributedDataParallel, gloo)"
  echo
}

header
measure
for model in $MODELS; do model_table "$model"; done
failed=$(awk '$6 == "n/a"' "$LOG_DIR/results.tsv" | wc -l)
[ "$failed" = 0 ] || echo "$failed run(s) failed (n/a); their logs: $LOG_DIR"
echo "Logs of every run: $LOG_DIR"
