#!/usr/bin/env bash
# The check run on a GPU host, in tiers that fit its short windows. Tier 1, the first call (about 4 minutes
# after the machine's start): probe, unpack what tools/gpu-host/bundle.sh packed, the core GPU cases 8 at a
# time, ResNet-18 `bench step` eager and graphed, and the fast CIFAR-10 recipe for one seed eager, graphed and
# as airbench94. Tier 2, a re-check call or the next window: the other GPU cases, more seeds, the PyTorch
# baselines (eager and compiled), the kernels and the profiles. Every case and speed row has its own
# timeout, a failure is recorded and the next one runs, and summary.md (with logs.tar.xz) is rewritten as
# each finishes: a call cut off anywhere still brings back all it did. OUT_DIR gets at most 8 files:
# summary.md, logs.tar.xz and speed.md (the speed rows' output).
#
# The several-NCCL-hosts tier (--tier hosts), the first call of a window on a host with one GPU: probe, unpack and
# the cases that need several GPUs, their ranks sharing GPU 0 as separate NCCL hosts, one case at a time.
#
# usage: tools/gpu-host/device_check.sh [--tier 1|2|hosts] BUNDLE_DIR OUT_DIR         (from the checkout's root)
#        tools/gpu-host/device_check.sh --recheck REGEX [--rebuild TARGETS] BUNDLE_DIR OUT_DIR
#   --tier N           the tier to run [1]: 1, 2, or hosts
#   --recheck REGEX    unpack, then only the GPU cases (ctest names) matching REGEX
#   --rebuild TARGETS  before that, build these targets ("fusetrain unit_tests") on the host from the
#                      checkout (the bundle's .deb files must include the -dev packages, as fetch-debs.sh's do)
# Environment:
#   BUDGET_S       wall seconds for the whole call [tier 1: 240, tier 2: 420, hosts: 330, re-check: 240]
#   STAGES         the stages in order [probe unpack cases speed]; `linkage` (ctest -L linkage) is there for a
#                  call that names it, and `data` (after unpack): the real CIFAR-10 carried in parts over the
#                  calls before (tools/gpu-host/data_split.sh's plan), assembled from DATA_STORE
#                  [/tmp/fusetrain-data], checked and made into the fast recipe's shards, which every fast row
#                  then trains on instead of the JPEG copy. STAGE_LIBRARY=FILE is sourced first and may define
#                  stage_NAME and row_NAME functions or replace run_gpu_case (tests use stand-ins)
#   CASES          the GPU cases (ctest names) of the cases or nccl_hosts stage [the tier's]; JOBS=8 run at once,
#                  then those with ctest's RUN_SERIAL (they time the GPU) one at a time with nothing beside them
#   FUSETRAIN_GPU_NCCL_RANKS=N  the ranks of the several-rank NCCL cases [2]
#   CASE_LIMIT_S   the nccl_hosts stage's limit for each case, so that one that hangs leaves the rest their time
#                  [the budget]
#   ROWS           the speed rows of the speed stage [the tier's]; fast_vs_airbench (in no tier): the fast
#                  recipe eager and graphed against airbench94, SEEDS (at least 5) seeds interleaved, each a
#                  fresh process after its warm-up, through tools/bench/fast_cifar.sh (WARMUP, STEPS, SET pass on);
#                  muon_vs_airbench (in no tier): the Muon recipe eager and graphed against airbench94_muon.py;
#                  fast_variants (in no tier): the graphed recipe with ATen's pool+norm+GELU, the max-pool kernel
#                  or the fused pair, and fp16 weights, VARIANT_SEEDS [2] seeds; fast_pick (in no tier): the
#                  model.pool_norm_gelu of PICK_KERNELS [aten pool] whose graphed recipe trains fastest over
#                  PICK_SEEDS [2] seeds, every seed at PICK_MIN_ACC % [93.5] or more, which the two comparison
#                  rows after it in the call then run (where SET is not given)
#   SEEDS=3        tier 2: the fast recipe's seeds 1 .. SEEDS-1 (tier 1 runs seed 0)
#   FUSETRAIN_CIFAR10_JPG=FILE  the CIFAR-10 JPEG archive of the fast recipe [BUNDLE_DIR/cifar10-jpg.tar.xz]
#   DEVICE_CHECK_DEPS=DIR       where the bundle's .deb files are unpacked [/tmp/fusetrain-deps]
#   FAST_DIR=DIR   the fast recipe's shards and runs [/tmp/fusetrain-fast-cifar]; DATA_STORE=DIR the data stage's parts
# Exit status: 0 all passed (or skipped), 1 a stage, case or row failed or was cut off, 3 no CUDA device.
# shellcheck disable=SC2317  # stage_NAME, row_NAME and prep_NAME are called by name
set -uo pipefail  # no errexit: each case, row and stage is checked and recorded, and the next one runs
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tools/gpu-host/host_env.sh
source "$here/host_env.sh"
deps=${DEVICE_CHECK_DEPS:-/tmp/fusetrain-deps}
fast=${FAST_DIR:-/tmp/fusetrain-fast-cifar}  # the fast recipe's shards and runs

TIER1_CASES="gpu.cuda_graphs gpu.cuda_graphs_schedule gpu.no_host_sync gpu.stop_resume gpu.cuda_kernels gpu.train_fp32
gpu.train_bf16 gpu.train_fp16"
TIER1_ROWS="step_eager step_graphs fast_eager_s0 fast_graphs_s0 airbench94_s0"
TIER2_ROWS="resnet_pytorch_eager fast_seeds airbench94_seeds fast_pytorch profile_eager profile_graphs
profile_airbench94 resnet_pytorch_compiled fast_pytorch_compiled fast_muon_s0 fast_muon_graphs_s0 airbench94_muon_s0"
# The cases that need several GPUs, run by the hosts tier with each rank an NCCL host of its own on GPU 0.
NCCL_HOSTS_CASES="gpu.nccl_equivalence gpu.sync_powersgd_nccl gpu.cuda_graphs_nccl gpu.no_host_sync_nccl
gpu.nccl_replicas gpu.nccl_rank_killed gpu.nccl_rank_held gpu.nccl_resize"

# ---- stages: each runs in its own process under the time left, output in $LOGS/NAME.log; a line
# "figure: TEXT" in it goes into the summary ----

stage_probe() {
  if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L 2> /dev/null | grep -q '^GPU [0-9]'; then
    echo "figure: no CUDA device (nvidia-smi $(command -v nvidia-smi > /dev/null && echo 'lists none' || echo 'not found'))"
    return 3
  fi
  nvidia-smi
  echo "figure: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -n 1)"
  "${FUSETRAIN_PYTHON:-python3}" -c 'import torch; print("figure: torch", torch.__version__, "CUDA", torch.version.cuda, "NCCL",
              ".".join(map(str, torch.cuda.nccl.version())), "devices", torch.cuda.device_count())'
}

# The bundle's libraries and build in place. The bundle names no folder of the machine that made it: its
# ctest files say @FUSETRAIN_SOURCE@ and @FUSETRAIN_BUILD@, which become this checkout and the build here.
stage_unpack() {
  local info=$BUNDLE/bundle.info build
  [ -f "$info" ] || { echo "figure: no $info: make the bundle with tools/gpu-host/bundle.sh"; return 1; }
  grep -qx 'paths=placeholders' "$info" ||
    { echo "figure: $info is from an older bundle.sh (it names the CPU machine's folders): remake the bundle"; return 1; }
  build=$(build_dir)
  echo "figure: bundle of $(sed -n 's/^commit=//p' "$info") made $(sed -n 's/^made_at=//p' "$info")"
  if ls "$BUNDLE"/debs/*.deb > /dev/null 2>&1; then unpack_debs "$BUNDLE/debs" "$deps" || return 1; fi
  mkdir -p "$deps" "$build" && write_env "$deps" || return 1
  tar -xJf "$BUNDLE/bundle.tar.xz" -C "$build" || return 1
  find "$build" -name '*.cmake' -print0 |
    xargs -0 -r sed -i -e "s|@FUSETRAIN_BUILD@|$build|g" -e "s|@FUSETRAIN_SOURCE@|$root|g" || return 1
  # shellcheck source=/dev/null
  . "$deps/env.sh"
  if "$build/bin/fusetrain" info; then return 0; fi
  echo "figure: the bundled fusetrain does not start here: building on the host"
  TESTS=none PREFIX=$deps bash "$here/build.sh" "$BUNDLE/debs" "$build"
}

stage_linkage() { in_build ctest -L linkage --output-on-failure; }

stage_rebuild() { TESTS=none TARGETS=$REBUILD PREFIX=$deps bash "$here/build.sh" "$BUNDLE/debs" "$(build_dir)"; }

# The GPU cases, JOBS at once, each under its own timeout (its ctest TIMEOUT, and the budget); each one's
# result is recorded as it ends. Tier 1 prepares the fast recipe's shards meanwhile (CPU work).
stage_cases() {
  local name
  trap cut_off TERM
  if [ "$TIER" = 1 ] && [[ " $STAGE_LIST " == *" speed "* ]] && [ -z "$RECHECK" ]; then
    run_unit prep fast_data 120 &
  fi
  tier_cases | tr ' ' '\n' | sed '/^$/d' > "$LOGS/cases.list"
  serial_cases > "$LOGS/serial.list"
  for name in $(grep -vxF -f "$LOGS/serial.list" "$LOGS/cases.list"); do
    while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-8}" ]; do wait -n; done
    run_unit case "$name" "$BUDGET" &
  done
  wait
  # RUN_SERIAL cases time the GPU: each alone, after the others (separate ctest processes would not keep it).
  for name in $(grep -xF -f "$LOGS/serial.list" "$LOGS/cases.list"); do run_unit case "$name" "$BUDGET"; done
  unit_results case
}

# The several-NCCL-hosts stage: the cases that need several GPUs, each rank on GPU 0 as an NCCL host of its own
# (FUSETRAIN_GPU_NCCL_HOSTS, tests/gpu/lib.sh), one case at a time: their ranks share the device, and every
# all-reduce crosses NCCL's sockets.
stage_nccl_hosts() {
  local name
  trap cut_off TERM
  export FUSETRAIN_GPU_NCCL_HOSTS=1
  for name in ${CASES:-$NCCL_HOSTS_CASES}; do run_unit case "$name" "${CASE_LIMIT_S:-$BUDGET}"; done
  unit_results case
}

# The build's GPU cases with ctest's RUN_SERIAL property, one a line (none where ctest cannot list them).
serial_cases() {
  in_build ctest --show-only=json-v1 2> /dev/null | "${FUSETRAIN_PYTHON:-python3}" -c '
import json, sys
for test in json.load(sys.stdin).get("tests", []):
    if any(p["name"] == "RUN_SERIAL" and p["value"] for p in test.get("properties", [])):
        print(test["name"])' 2> /dev/null || true
}

# unit_results TABLE: a stage's status from its units' rows: 124 when one was cut off at the budget or not
# started for want of it, 1 when one failed or timed out, else 0.
unit_results() {
  if grep -qE '\| (cut off at the budget|not started) \|' "$LOGS/$1.rows" 2> /dev/null; then return 124; fi
  if grep -qE '^\| [^|]* \| (failed|timed out)' "$LOGS/$1.rows" 2> /dev/null; then return 1; fi
  return 0
}

# The speed rows one after another (they time the GPU, which must be theirs alone).
stage_speed() {
  local row
  for row in ${ROWS:-$(tier_rows)}; do run_unit row "$row" "$(row_limit "$row")"; done
  unit_results row
}

# ---- GPU cases ----

# The cases of this call: CASES, the re-check's, tier 1's, or (tier 2) every other `gpu` case of the build.
tier_cases() {
  if [ -n "${CASES:-}" ]; then
    echo "$CASES"
  elif [ -n "$RECHECK" ]; then
    all_gpu_cases | grep -E -- "$RECHECK"
  elif [ "$TIER" = 1 ]; then
    echo "$TIER1_CASES"
  else
    all_gpu_cases | grep -vxF -f <(tr ' ' '\n' <<< "$TIER1_CASES")
  fi
}
all_gpu_cases() { in_build ctest -N -L '^gpu$' | sed -n 's/^ *Test *#[0-9]*: //p'; }

# run_gpu_case NAME: one case through ctest in the unpacked build, verbose (its figures are in its output);
# its own limit is its ctest TIMEOUT.
run_gpu_case() { in_build ctest -R "^${1//./\\.}\$" --no-tests=error --output-on-failure -V; }

# The stage's timeout came: every case (or preparation) still running is stopped and recorded as cut off.
cut_off() {
  local file pid unit
  for file in "$LOGS"/running/case:* "$LOGS"/running/prep:*; do
    [ -e "$file" ] || continue
    pid=$(cat "$file") unit=${file##*/}
    [ -z "$pid" ] || kill -TERM -- "-$pid" 2> /dev/null
    rm -f "$file"
    record_row "${unit%%:*}" "${unit#*:}" "cut off at the budget" "$(($(date +%s) - $(stat -c %Y "$LOGS/${unit%%:*}/${unit#*:}.log")))" ""
  done
  exit 124
}

# ---- speed rows: each prints "figure: TEXT" lines for the summary; output appended to speed.md ----

row_limit() {
  case $1 in
    fast_vs_airbench|muon_vs_airbench) echo 480 ;;
    step_*) echo 90 ;;
    fast_*_s0|airbench94_s0) echo 120 ;;
    resnet_pytorch_compiled|airbench94_muon_s0) echo 240 ;;
    *) echo 180 ;;
  esac
}

bench_step() {
  "$(build_dir)/bin/fusetrain" bench step --model resnet18 --device cuda --ranks 1 --batch 512 --precision bf16 \
    --channels-last --steps 30 --warmup 10 "$@" | figures 'images_per_s='
}
row_step_eager() { bench_step; }
row_step_graphs() { bench_step --cuda-graphs; }

# fast_run LABEL SEED [--set k=v...]: the fast recipe (FAST_CONFIG [configs/fast/cifar10.yaml]) once on the fast
# shards; its accuracy and training seconds as a figure and a line of $fast/runs.tsv (label, seed, accuracy %,
# training s).
fast_run() {
  local label=$1 seed=$2 name config=${FAST_CONFIG:-$root/configs/fast/cifar10.yaml}
  shift 2
  ensure_fast_data || return 1
  name=$label-s$seed
  "$(build_dir)/bin/fusetrain" train --config "$config" --set "data.path=$fast/data" --set "output.dir=$fast/runs" \
    --set "output.name=$name" --set output.overwrite=true --set "train.seed=$seed" "$@" || return 1
  "$(build_dir)/bin/fusetrain" report --csv "$fast/runs/$name.h5" |
    awk -F, -v n="$name" -v label="$label" -v seed="$seed" -v runs="$fast/runs.tsv" '
      NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
      { print "figure: " n " acc " $c["final_acc_%"] "%, train " $c["train_s"] " s"
        print label "\t" seed "\t" $c["final_acc_%"] "\t" $c["train_s"] >> runs }'
}

# pick_fastest RUNS FLOOR PREFIX SEEDS: of the runs labelled PREFIX<K> in RUNS (fast_run's lines), the K with the
# lowest mean training time whose SEEDS seeds all ran and reached FLOOR % (a tie: the first in sort order);
# status 1 if none did.
pick_fastest() {
  awk -F'\t' -v floor="$2" -v prefix="$3" -v seeds="$4" '
    index($1, prefix) == 1 { k = substr($1, length(prefix) + 1); n[k]++; t[k] += $4
                             if (!(k in low) || $3 + 0 < low[k]) low[k] = $3 + 0 }
    END { for (k in n) {
            if (n[k] != seeds + 0 || low[k] < floor + 0) continue
            if (best == "" || t[k] / n[k] < t[best] / n[best] || (t[k] / n[k] == t[best] / n[best] && k < best)) best = k
          }
          if (best == "") exit 1
          print best }' "$1"
}

# The graphed recipe at the comparison's clocks: 5 warm-up steps, then airbench94's 476 steps.
GRAPHED_476=(--set train.cuda_graphs=true --set train.warmup_steps=5 --set train.max_steps=476)

# The model.pool_norm_gelu the comparison rows run, picked by measurement in this call (ROWS' fast_pick): each of
# PICK_KERNELS graphed at the comparison's clocks, PICK_SEEDS seeds interleaved; the pick goes to $fast/pick.set,
# which comparison_set passes on.
row_fast_pick() {
  local s k pick status=0 kernels=${PICK_KERNELS:-aten pool} floor=${PICK_MIN_ACC:-93.5} seeds=${PICK_SEEDS:-2}
  mkdir -p "$fast" && rm -f "$fast/pick.set" "$fast/runs.tsv"
  for ((s = 0; s < seeds; ++s)); do
    for k in $kernels; do
      fast_run "pick-$k" "$s" "${GRAPHED_476[@]}" --set "model.pool_norm_gelu=$k" || status=1
    done
  done
  if [ ! -f "$fast/runs.tsv" ] || ! pick=$(pick_fastest "$fast/runs.tsv" "$floor" pick- "$seeds"); then
    echo "figure: no model.pool_norm_gelu of '$kernels' ran and reached $floor% on every seed"
    return 1
  fi
  echo "model.pool_norm_gelu=$pick" > "$fast/pick.set"
  echo "figure: picked model.pool_norm_gelu=$pick (the fastest mean training time at $floor% or more)"
  return "$status"
}
row_fast_eager_s0() { fast_run fast 0; }
row_fast_graphs_s0() { fast_run fast-graphs 0 --set train.cuda_graphs=true; }
row_fast_seeds() {
  local s status=0
  for ((s = 1; s < ${SEEDS:-3}; ++s)); do
    fast_run fast "$s" || status=1
    fast_run fast-graphs "$s" --set train.cuda_graphs=true || status=1
  done
  return "$status"
}

# airbench94 SEED COUNT [ARG...]: the public airbench94 (carried in the bundle) on the same shards.
airbench94() {
  local args=("${@:3}")
  ensure_fast_data || return 1
  [ ! -d "$BUNDLE/airbench/airbench" ] || args+=(--airbench "$BUNDLE/airbench")
  "${FUSETRAIN_PYTHON:-python3}" "$root/tools/bench/airbench94.py" --data "$fast/data" --seed "$1" --seeds "$2" \
    --work "$fast/airbench94" "${args[@]}" | figures '^airbench94'
}
row_airbench94_s0() { airbench94 0 1; }
# The Muon recipe (configs/fast/cifar10_muon.yaml) eager and graphed, and the public airbench94_muon.py (carried in
# the bundle, AIRBENCH_REPO) unchanged on the same shards, compiled as it compiles itself.
row_fast_muon_s0() { FAST_CONFIG=$root/configs/fast/cifar10_muon.yaml fast_run fast-muon 0; }
row_fast_muon_graphs_s0() {
  FAST_CONFIG=$root/configs/fast/cifar10_muon.yaml fast_run fast-muon-graphs 0 --set train.cuda_graphs=true
}
row_airbench94_muon_s0() {
  ensure_fast_data || return 1
  [ -f "$BUNDLE/airbench/airbench94_muon.py" ] ||
    { echo "no airbench94_muon.py in the bundle (bundle.sh carries it from AIRBENCH_REPO)"; return 1; }
  "${FUSETRAIN_PYTHON:-python3}" "$root/tools/bench/airbench94_muon.py" --data "$fast/data" --seed 0 --seeds 1 \
    --script "$BUNDLE/airbench/airbench94_muon.py" --work "$fast/airbench94_muon" | figures '^airbench94_muon'
}
row_airbench94_seeds() { airbench94 1 $((${SEEDS:-3} - 1)); }
# The PyTorch port eager (its seeds) and compiled (seed 0): on an H200 (2026-11-27) the compiled port learned
# nothing (10%) while the eager one reached airbench94's accuracy, so the compiled row is its own.
row_fast_pytorch() {
  ensure_fast_data || return 1
  "${FUSETRAIN_PYTHON:-python3}" "$root/tools/bench/fast_cifar_pytorch.py" --data "$fast/data" --seed 0 \
    --seeds "${SEEDS:-3}" --no-compile | figures '^fast_cifar seed='
}
row_fast_pytorch_compiled() {
  ensure_fast_data || return 1
  "${FUSETRAIN_PYTHON:-python3}" "$root/tools/bench/fast_cifar_pytorch.py" --data "$fast/data" --seed 0 \
    --seeds 1 --compile | figures '^fast_cifar seed='
}

# The fast recipe graphed at the comparison's clocks, VARIANT_SEEDS seeds [2] interleaved: max-pool -> BatchNorm ->
# GELU as ATen's operations (the default), with the max-pool kernel, as the fused kernel pair, and ATen's with
# fp16 weights (BatchNorm in float32); accuracy and training seconds of each run as figures.
row_fast_variants() {
  local s status=0
  for ((s = 0; s < ${VARIANT_SEEDS:-2}; ++s)); do
    fast_run fast-aten "$s" "${GRAPHED_476[@]}" --set model.pool_norm_gelu=aten || status=1
    fast_run fast-pool "$s" "${GRAPHED_476[@]}" --set model.pool_norm_gelu=pool || status=1
    fast_run fast-fused "$s" "${GRAPHED_476[@]}" --set model.pool_norm_gelu=fused || status=1
    fast_run fast-aten-half "$s" "${GRAPHED_476[@]}" --set model.pool_norm_gelu=aten \
      --set precision.half_weights=true || status=1
  done
  return "$status"
}

# The settings of the comparison rows: SET where given, else fast_pick's pick on this host, else none.
comparison_set() {
  if [ -n "${SET:-}" ]; then
    echo "$SET"
  elif [ -f "$fast/pick.set" ]; then
    cat "$fast/pick.set"
  fi
}

# fast_cifar_table OUT_NAME [VAR=VALUE...]: tools/bench/fast_cifar.sh on the fast recipe's shards (the binary set
# where the data stage made it), SEEDS [5] seeds, graphed too, under the settings given (SET, else fast_pick's
# pick); its table as figures.
fast_cifar_table() {
  local set
  set=$(comparison_set)
  echo "figure: data $(cat "$fast/data/.source" 2> /dev/null || echo "cifar10-jpg (JPEG quality 75)")"
  [ -z "$set" ] || echo "figure: settings $set"
  env OUT="$fast/$1" FUSETRAIN_BIN="$(build_dir)/bin" PYTHON="${FUSETRAIN_PYTHON:-python3}" GRAPHS=1 PYTORCH=no \
    SET="$set" "${@:2}" bash "$root/tools/bench/fast_cifar.sh" "$fast/data" "${SEEDS:-5}" |
    figures '^(\| [^|-]|time ratio|fast_cifar)'
}

# The fast recipe against airbench94, seed by seed in fresh processes, fusetrain after train.warmup_steps and
# airbench94 after its warmup94(); the table (accuracy, training and cold seconds, steps per side) as figures.
row_fast_vs_airbench() {
  local airbench=installed
  ensure_fast_data || return 1
  [ ! -d "$BUNDLE/airbench/airbench" ] || airbench=$BUNDLE/airbench
  fast_cifar_table vs AIRBENCH="$airbench"
}

# The Muon recipe (configs/fast/cifar10_muon.yaml) eager and graphed against the public airbench94_muon.py (carried in
# the bundle, AIRBENCH_REPO), SEEDS seeds on the same shards: fusetrain's each a fresh process after its warm-up,
# the script's all in one process after its warm-up run, as it runs its own (it compiles for minutes).
row_muon_vs_airbench() {
  ensure_fast_data || return 1
  [ -f "$BUNDLE/airbench/airbench94_muon.py" ] ||
    { echo "no airbench94_muon.py in the bundle (bundle.sh carries it from AIRBENCH_REPO)"; return 1; }
  fast_cifar_table vs_muon CONFIG="$root/configs/fast/cifar10_muon.yaml" \
    MUON_SCRIPT="$BUNDLE/airbench/airbench94_muon.py"
}

# ResNet-18 bf16 channels_last batch 512 in eager (--no-compile) or compiled (--compile) PyTorch.
resnet_pytorch() {
  "${FUSETRAIN_PYTHON:-python3}" "$root/tools/bench/pytorch_baseline.py" --style tuned --synthetic --fixed-batch \
    --model resnet18 --device cuda --batch-size 512 --precision bf16 --channels-last --steps 30 --warmup 10 "$1" |
    figures 'images_per_s='
}
row_resnet_pytorch_eager() { resnet_pytorch --no-compile; }
row_resnet_pytorch_compiled() { resnet_pytorch --compile; }

# profile_fast LABEL GRAPHS: 10 steps of the fast recipe's epoch 1 (after 20) under the operator profiler, with
# the comparison rows' settings (comparison_set): wall time per step against the GPU's busy time. The profiler
# attaches as the run starts on a device, so before the graphed run's capture (OpProfiler), and records steps 24-33.
profile_fast() {
  local dir=$fast/profile kv set sets=()
  ensure_fast_data || return 1
  mkdir -p "$dir"
  set=$(comparison_set)
  for kv in $set; do sets+=(--set "$kv"); done
  [ -z "$set" ] || echo "figure: settings $set"
  "$(build_dir)/bin/fusetrain" train --config "$root/configs/fast/cifar10.yaml" --set "data.path=$fast/data" \
    --set "output.dir=$dir" --set "output.name=fast-$1" --set train.epochs=1 --set "train.cuda_graphs=$2" \
    --set profile.wait=20 --set profile.warmup=3 --set profile.active=10 --set "profile.trace=$dir/$1.json" \
    "${sets[@]}" || return 1
  "${FUSETRAIN_PYTHON:-python3}" "$root/tools/bench/trace_summary.py" "$dir/$1.json" --steps 10 --label "fast_$1" |
    figures '^trace_summary'
}
row_profile_eager() { profile_fast eager false; }
row_profile_graphs() { profile_fast graphs true; }
# The same steps of airbench94's first epoch (24-33) under the profiler, for the top-kernels table beside fusetrain's.
row_profile_airbench94() {
  mkdir -p "$fast/profile"
  airbench94 0 1 --profile "$fast/profile/airbench94.json" || return 1
  "${FUSETRAIN_PYTHON:-python3}" "$root/tools/bench/trace_summary.py" "$fast/profile/airbench94.json" --steps 10 \
    --label airbench94 | figures '^trace_summary'
}

# The fast recipe's shards from the CIFAR-10 JPEG archive, made once per call (several rows share them).
ensure_fast_data() {
  local archive=${FUSETRAIN_CIFAR10_JPG:-$BUNDLE/cifar10-jpg.tar.xz}
  mkdir -p "$fast"
  (
    flock 9
    [ ! -f "$fast/data/.done" ] || exit 0
    [ -f "$archive" ] || { echo "no CIFAR-10 archive $archive (FUSETRAIN_CIFAR10_JPG)"; exit 1; }
    rm -rf "$fast/jpg" "$fast/data" && mkdir -p "$fast/jpg" && tar -xJf "$archive" -C "$fast/jpg" &&
      "$(build_dir)/bin/fusetrain-prep" --format folder --name cifar10 --output "$fast/data" \
        --input "$(find "$fast/jpg" -maxdepth 2 -type d -name train -printf '%h\n' | head -n 1)" > /dev/null &&
      touch "$fast/data/.done"
  ) 9> "$fast/.lock"
}
prep_fast_data() { ensure_fast_data; }

# The real CIFAR-10 binary release, put together from the parts the calls stashed (data_assemble.sh), checked
# against its SHA-256 and made into the fast recipe's shards by this build's fusetrain-prep; the JPEG shards
# are never made after it.
stage_data() {
  local store=${DATA_STORE:-/tmp/fusetrain-data}
  mkdir -p "$fast"
  FUSETRAIN_PREP="$(build_dir)/bin/fusetrain-prep" bash "$here/data_assemble.sh" assemble "$store" \
    "$store/cifar10-bin.tar.xz" "$fast/data-bin" || return 1
  (
    flock 9
    rm -rf "$fast/data" && mv "$fast/data-bin" "$fast/data" &&
      echo "cifar10-bin (sha256 $(sed -n 's/^sha256=//p' "$store/manifest.txt"))" > "$fast/data/.source" &&
      touch "$fast/data/.done"
  ) 9> "$fast/.lock" || return 1
  echo "figure: fast recipe data $(cat "$fast/data/.source"): $("$(build_dir)/bin/fusetrain" inspect \
    "$fast/data/train-00000-of-00001.h5" | sed -n 's|^/images \[\([0-9]*\),.*|\1|p') training images"
}

# figures REGEX: passes its input through, adding a "figure:" line for each line matching REGEX.
figures() { while IFS= read -r line; do echo "$line"; ! grep -Eq -- "$1" <<< "$line" || echo "figure: $line"; done; }

# ---- running one case, row or stage, and recording it ----

build_dir() { echo "$root/$(sed -n 's/^build_name=//p' "$BUNDLE/bundle.info")"; }
in_build() { (cd "$(build_dir)" && "$@"); }
time_left() { echo $((START + BUDGET - $(date +%s))); }

# run_unit KIND NAME LIMIT: runs a case, row or prep (KIND) in its own process group under LIMIT seconds
# (a case: at most the budget's), its output in $LOGS/KIND/NAME.log, and records its row when it ends.
run_unit() {
  local kind=$1 name=$2 limit=$3 start pid status
  if [ "$(time_left)" -lt 15 ]; then
    record_row "$kind" "$name" "not started" 0 "only $(time_left) s of the budget left"
    return 0
  fi
  [ "$limit" -lt $(($(time_left) - 5)) ] || limit="$(($(time_left) - 5)) budget"
  mkdir -p "$LOGS/$kind" "$LOGS/running"
  start=$(date +%s)
  timeout --kill-after=5 "${limit% budget}" env UNIT_RUN="$kind:$name" bash "$0" "${ARGS[@]}" > "$LOGS/$kind/$name.log" 2>&1 &
  pid=$!
  echo "$pid" > "$LOGS/running/$kind:$name"
  write_summary
  wait "$pid"
  status=$?
  [ -e "$LOGS/running/$kind:$name" ] || return 0  # already recorded as cut off
  rm -f "$LOGS/running/$kind:$name"
  record_row "$kind" "$name" "$(verdict "$status" "$LOGS/$kind/$name.log" "$limit")" "$(($(date +%s) - start))" \
    "$(figures_of "$LOGS/$kind/$name.log")"
  [ "$kind" != row ] || { echo "## $name"; echo; cat "$LOGS/$kind/$name.log"; echo; } >> "$OUT/speed.md"
}

# verdict STATUS LOG LIMIT: a unit's result in words, with the first SKIP, FAIL or error line of its log (ctest
# prefixes a case's lines with its number). A LIMIT "N budget" was the budget's, not the unit's own.
verdict() {
  case $1 in
    0) if grep -q '\*\*\*Skipped' "$2"; then echo "skipped: $(grep -m1 -oE 'SKIP: .*' "$2" || echo '?')"; else echo passed; fi ;;
    124|137) if [ "${3#* }" = budget ]; then echo "cut off at the budget"; else echo "timed out after $3 s"; fi ;;
    *) echo "failed (status $1): $(grep -m1 -oE 'FAIL( \[[^]]*\])?: .*|error: .*' "$2" || tail -n 1 "$2")" ;;
  esac
}
figures_of() { sed -nE 's/^([0-9]+: )?figure: //p' "$1" | paste -sd ';' -; }

# record_row TABLE NAME RESULT SECONDS FIGURES: one row of a table of the summary, which is then rewritten.
record_row() {
  local line
  line=$(printf '| %s | %s | %s | %s |' "$2" "$(cell "$3")" "$4" "$(cell "$5")")
  (
    flock 8
    echo "$line" >> "$LOGS/$1.rows"
  ) 8> "$LOGS/rows.lock"
  write_summary
}
cell() { tr '\n|' ' /' <<< "$1" | sed 's/ *$//'; }

# The summary and the packed logs, each replaced whole (never half-written), under one lock.
write_summary() {
  (
    flock 9
    summary_text > "$OUT/.summary.partial" && mv "$OUT/.summary.partial" "$OUT/summary.md"
    tar -C "$LOGS" --exclude='*.lock' --exclude=running -cJf "$OUT/.logs.partial" . 2> /dev/null
    [ ! -s "$OUT/.logs.partial" ] || mv "$OUT/.logs.partial" "$OUT/logs.tar.xz"
  ) 9> "$LOGS/summary.lock"
}

summary_text() {
  local running
  running=$(find "$LOGS/running" -type f -printf '%f ' 2> /dev/null)
  echo "# GPU check: $MODE, $(date -u '+%Y-%m-%d %H:%M UTC'), host $(hostname)"
  echo
  echo "budget $BUDGET s, used $(($(date +%s) - START)) s${running:+; running: $running}"
  table stage stage
  table "GPU case" case
  table "speed row" row
  table "prepared" prep
}
table() {
  [ -s "$LOGS/$2.rows" ] || return 0
  printf '\n| %s | result | seconds | figures |\n|---|---|---|---|\n' "$1"
  cat "$LOGS/$2.rows"
}

# run_stage NAME: runs stage NAME in its own process with the seconds left, or records why it did not.
run_stage() {
  local name=$1 limit start status=0
  limit=$(($(time_left) - 5))
  if [ "$limit" -lt 10 ]; then
    record_row stage "$name" "not started" 0 "only $((limit + 5)) s of the budget left"
    return 0
  fi
  start=$(date +%s)
  mkdir -p "$LOGS/running" && touch "$LOGS/running/stage:$name"
  write_summary
  timeout --kill-after=5 "$limit" env STAGE_RUN="$name" bash "$0" "${ARGS[@]}" > "$LOGS/$name.log" 2>&1 || status=$?
  rm -f "$LOGS/running/stage:$name"
  case $status in
    0) record_row stage "$name" passed "$(($(date +%s) - start))" "$(figures_of "$LOGS/$name.log")" ;;
    3) record_row stage "$name" "no device" "$(($(date +%s) - start))" "$(figures_of "$LOGS/$name.log")" ;;
    124|137) record_row stage "$name" "cut off at the budget" "$(($(date +%s) - start))" "$(figures_of "$LOGS/$name.log")" ;;
    *) record_row stage "$name" "failed (status $status)" "$(($(date +%s) - start))" \
         "$(figures_of "$LOGS/$name.log") $(tail -n 3 "$LOGS/$name.log")" ;;
  esac
  return "$status"
}

# The call's exit status from its rows: 3 no device, 1 anything but passed or skipped, else 0.
exit_status() {
  if grep -q '| no device |' "$LOGS/stage.rows" 2> /dev/null; then return 3; fi
  # grep reads the files itself: `cat | grep -q` under pipefail fails when grep stops early and cat gets SIGPIPE
  if grep -hvqE '^\| [^|]* \| (passed|skipped[^|]*) \|' "$LOGS"/*.rows 2> /dev/null; then return 1; fi
  return 0
}

# A child process: one stage, case, row or preparation, with the environment the unpack stage made.
run_child() {
  if [ "${STAGE_RUN:-}" != probe ] && [ "${STAGE_RUN:-}" != unpack ] && [ -f "$deps/env.sh" ]; then
    # shellcheck source=/dev/null
    . "$deps/env.sh"
  fi
  case ${UNIT_RUN:-} in
    case:*) run_gpu_case "${UNIT_RUN#case:}" ;;
    row:*) "row_${UNIT_RUN#row:}" ;;
    prep:*) "prep_${UNIT_RUN#prep:}" ;;
    *) "stage_$STAGE_RUN" ;;
  esac
}

parse_args() {
  TIER=1 RECHECK="" REBUILD=""
  while [ $# -gt 2 ]; do
    case $1 in
      --tier) TIER=$2; shift 2 ;;
      --recheck) RECHECK=$2; shift 2 ;;
      --rebuild) REBUILD=$2; shift 2 ;;
      *) echo "device_check.sh: unknown option $1 (see the header)" >&2; exit 2 ;;
    esac
  done
  [ $# -eq 2 ] || { echo "usage: device_check.sh [--tier 1|2|hosts] [--recheck REGEX [--rebuild TARGETS]] BUNDLE_DIR OUT_DIR" >&2; exit 2; }
  case $TIER in 1|2|hosts) ;; *) echo "device_check.sh: --tier is 1, 2 or hosts, not '$TIER'" >&2; exit 2 ;; esac
  BUNDLE=$(cd "$1" && pwd) || exit 2
  OUT=$(mkdir -p "$2" && cd "$2" && pwd) || exit 2
}

tier_rows() { if [ "$TIER" = 1 ]; then echo "$TIER1_ROWS"; else echo "$TIER2_ROWS"; fi; }

main() {
  ARGS=("$@")
  parse_args "$@"
  if [ -n "${STAGE_LIBRARY:-}" ]; then
    # shellcheck source=/dev/null
    source "$STAGE_LIBRARY"
  fi
  if [ -n "${STAGE_RUN:-}${UNIT_RUN:-}" ]; then
    run_child
    exit
  fi
  MODE="tier $TIER" STAGE_LIST=${STAGES:-probe unpack cases speed}
  [ "$TIER" != hosts ] || STAGE_LIST=${STAGES:-probe unpack nccl_hosts}
  [ -z "$RECHECK" ] || MODE="re-check of $RECHECK" STAGE_LIST="unpack ${REBUILD:+rebuild }cases"
  local budget=240 name status
  [ "$TIER" != 2 ] || [ -n "$RECHECK" ] || budget=420
  [ "$TIER" != hosts ] || [ -n "$RECHECK" ] || budget=330
  START=$(date +%s) BUDGET=${BUDGET_S:-$budget} LOGS=$(mktemp -d)
  export BUNDLE OUT RECHECK REBUILD TIER START BUDGET LOGS MODE STAGE_LIST
  rm -f "$OUT/summary.md" "$OUT/logs.tar.xz" "$OUT/speed.md"
  for name in $STAGE_LIST; do
    status=0
    run_stage "$name" || status=$?
    [ "$status" != 3 ] || break
  done
  write_summary
  cat "$OUT/summary.md"
  exit_status
  status=$?
  rm -rf "$LOGS"
  exit "$status"
}

main "$@"
