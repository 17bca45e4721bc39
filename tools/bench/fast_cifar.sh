#!/usr/bin/env bash
# Time to accuracy of the fast CIFAR-10 recipe: fusetrain (configs/fast/cifar10.yaml), on a GPU also with CUDA
# graphs and the public airbench94 (airbench94.py), interleaved seed by seed (fusetrain seed 0, airbench94 seed
# 0, fusetrain seed 1, ...), each seed a fresh process of each; then the same recipe in PyTorch
# (fast_cifar_pytorch.py). One table: per side the test accuracy, the training seconds after an untimed warm-up
# in the same process, the cold process's seconds and the optimizer steps, each as mean, spread and range.
#
# usage: tools/bench/fast_cifar.sh DATA_DIR [SEEDS]      (SEEDS: default 10, seeds 0 .. SEEDS-1)
#
# Environment (defaults in brackets):
#   FUSETRAIN_BIN  folder with fusetrain [build/bin]       PYTHON  Python with torch and h5py [python3]
#   OUT            results files, logs and the summary [runs/fast_cifar]
#   RANKS          fusetrain ranks; > 1 runs under $MPIRUN [1]   MPIRUN  launcher [mpirun]
#   SET            extra `--set key=value` overrides for fusetrain, space-separated, e.g.
#                  "data.batch_size=512" at 2 ranks (keep the global batch at 1024)
#   WARMUP         fusetrain's train.warmup_steps [5: the graphed step's 3 eager steps, its capture and a replay]
#   STEPS          fusetrain's train.max_steps [476, airbench94's, with AIRBENCH; else the config's epochs]
#   PY_ARGS        extra arguments for fast_cifar_pytorch.py   PYTORCH  no: leave the PyTorch recipe out [yes]
#   AIRBENCH       a folder holding the airbench package, or "installed": also run the public airbench94
#                  (airbench94.py, CUDA only) on the same shards and seeds, its row and time ratios
#   GRAPHS         non-empty: also run fusetrain with train.cuda_graphs (GPU only), its own row and ratios
#                  (either optional side that fails is named and left out; the rest of the table stands)
#   CONFIG         fusetrain's recipe [configs/fast/cifar10.yaml]; configs/fast/cifar10_muon.yaml with MUON_SCRIPT
#   MUON_SCRIPT    the public airbench94_muon.py: also run it (airbench94_muon.py, CUDA only) on the same shards,
#                  after fusetrain's seeds, all seeds in one process after its warm-up run, as the script runs its
#                  own (each process compiles the model anew, for minutes); MUON_COMPILE its compile mode
#                  [max-autotune, the script's]. Its own steps, 200 (8 epochs of 25 at batch 2000), are the
#                  Muon recipe's 8 epochs: no train.max_steps is set for it
# The clocks, the same boundary on every side: train s = the training epochs after the warm-up (fusetrain: the
# sum of its epoch clocks, /summary/train_steps_s; airbench94: its own CUDA-event total without the final
# evaluation, the whitening fit in it; PyTorch: CUDA events around its training loop); cold s = the process's
# start (the kernel's record) to the end of its last epoch (fusetrain: /summary/cold_s), everything a fresh
# process does first included. Per-epoch seconds of every run are kept in OUT/<side>.epochs.
set -euo pipefail
data=${1:?usage: fast_cifar.sh DATA_DIR [SEEDS]}
seeds=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${FUSETRAIN_BIN:-$root/build/bin}
python=${PYTHON:-python3}
out=${OUT:-runs/fast_cifar}
ranks=${RANKS:-1}
[ -d "$data" ] || { echo "fast_cifar.sh: data folder $data does not exist" >&2; exit 2; }
[ -x "$bin/fusetrain" ] || { echo "fast_cifar.sh: $bin/fusetrain not found (build first or set FUSETRAIN_BIN)" >&2; exit 2; }
[[ "$seeds" =~ ^[1-9][0-9]*$ ]] || { echo "fast_cifar.sh: SEEDS must be a positive integer, got '$seeds'" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out"/*.rows "$out"/*.epochs

# output.overwrite: a rerun into the same OUT replaces each seed's results, model and event files by name
sets=(--set "data.path=$data" --set "output.dir=$out" --set output.overwrite=true
      --set "train.warmup_steps=${WARMUP:-5}")
config=${CONFIG:-$root/configs/fast/cifar10.yaml}
[ -f "$config" ] || { echo "fast_cifar.sh: CONFIG $config does not exist" >&2; exit 2; }
[ -z "${MUON_SCRIPT:-}" ] || [ -f "$MUON_SCRIPT" ] || { echo "fast_cifar.sh: MUON_SCRIPT $MUON_SCRIPT does not exist" >&2; exit 2; }
steps=${STEPS:-}
[ -n "$steps" ] || [ -z "${AIRBENCH:-}" ] || steps=476  # airbench94: ceil(9.9 epochs x 48 steps)
[ -z "$steps" ] || sets+=(--set "train.max_steps=$steps")
for kv in ${SET:-}; do sets+=(--set "$kv"); done
launch=()
if [ "$ranks" -gt 1 ]; then
  # shellcheck disable=SC2206  # MPIRUN is a command line
  launch=(${MPIRUN:-mpirun} -np "$ranks")
fi

# fusetrain_seed TAG SEED [--set k=v ...]: one seed in a fresh process; its row "acc train_s cold_s steps" in
# TAG.rows and its per-epoch seconds in TAG.epochs, from its results file.
fusetrain_seed() {
  local tag=$1 s=$2 name h5
  shift 2
  name=$tag-r$ranks-s$s h5=$out/$tag-r$ranks-s$s.h5
  "${launch[@]}" "$bin/fusetrain" train --config "$config" "${sets[@]}" "$@" \
    --set "train.seed=$s" --set "output.name=$name" > "$out/$name.log" 2>&1 ||
    { echo "fast_cifar.sh: fusetrain ($tag) seed $s failed; see $out/$name.log" >&2; tail -n 5 "$out/$name.log" >&2; return 1; }
  echo "$s $("$bin/fusetrain" inspect "$h5" /summary/final_test_acc /summary/train_steps_s /summary/cold_s \
    /summary/optimizer_steps | paste -sd ' ')" >> "$out/$tag.rows"
  echo "$s $("$bin/fusetrain" inspect "$h5" /epochs/epoch_time_s | paste -sd ,)" >> "$out/$tag.epochs"
}

# append_rows SIDE: each input line "NAME seed=S test_acc=A train_s=T airbench_s=X cold_s=C ... steps=N
# epochs_s=E1,E2,..." (airbench94.py's and airbench94_muon.py's) appended as SIDE's row and per-epoch seconds.
append_rows() {
  awk '{ for (i = 2; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] }
         print f["seed"], f["test_acc"], f["train_s"], f["cold_s"], f["steps"] >> rows
         print f["seed"], f["epochs_s"] >> epochs }' rows="$out/$1.rows" epochs="$out/$1.epochs"
}

# airbench94_seed SEED: one seed of airbench94 in a fresh process (after its warmup94()).
airbench94_seed() {
  local args=()
  [ "$AIRBENCH" = installed ] || args=(--airbench "$AIRBENCH")
  "$python" "$here/airbench94.py" --data "$data" --seed "$1" --seeds 1 --work "$out/airbench94" "${args[@]}" \
    >> "$out/airbench94.log" 2>> "$out/airbench94.err" || return 1
  append_rows airbench94 <<< "$(grep "^airbench94 seed=$1 " "$out/airbench94.log" | tail -n 1)"
}

# airbench94_muon_seeds: the public airbench94_muon.py, every seed in one process; rows as airbench94's.
airbench94_muon_seeds() {
  "$python" "$here/airbench94_muon.py" --data "$data" --seed 0 --seeds "$seeds" --script "$MUON_SCRIPT" \
    --compile "${MUON_COMPILE:-max-autotune}" --work "$out/airbench94_muon" > "$out/airbench94_muon.log" \
    2> "$out/airbench94_muon.err" || return 1
  grep '^airbench94_muon seed=' "$out/airbench94_muon.log" | append_rows airbench94_muon
}

# The optional sides never cost the table: the first failure is named and that side is left out.
drop() {
  echo "fast_cifar.sh: $1"
  rm -f "$out/$2.rows"
}
rm -f "$out/airbench94.log" "$out/airbench94.err"
for ((s = 0; s < seeds; ++s)); do
  fusetrain_seed fusetrain "$s" || exit 1
  if [ -n "${GRAPHS:-}" ] && ! fusetrain_seed fusetrain-graphs "$s" --set train.cuda_graphs=true; then
    drop "no CUDA graphs row (the runs failed; see $out/fusetrain-graphs-*.log)" fusetrain-graphs
    GRAPHS=
  fi
  if [ -n "${AIRBENCH:-}" ] && ! airbench94_seed "$s"; then
    drop "no airbench94 row (it failed; see $out/airbench94.err):" airbench94
    tail -n 5 "$out/airbench94.err"
    AIRBENCH=
  fi
done
if [ -n "${MUON_SCRIPT:-}" ] && ! airbench94_muon_seeds; then
  drop "no airbench94_muon row (it failed; see $out/airbench94_muon.err):" airbench94_muon
  tail -n 5 "$out/airbench94_muon.err"
fi

if [ "${PYTORCH:-yes}" != no ]; then
  # shellcheck disable=SC2086  # PY_ARGS is an argument list
  "$python" "$here/fast_cifar_pytorch.py" --data "$data" --seed 0 --seeds "$seeds" ${PY_ARGS:-} > "$out/pytorch.log" 2>&1 ||
    { echo "fast_cifar.sh: the PyTorch recipe failed; see $out/pytorch.log" >&2; tail -n 5 "$out/pytorch.log" >&2; exit 1; }
  # its own clock after its own warm-up; no cold clock, and its steps are whole epochs (printed by it)
  sed -nE 's/^fast_cifar seed=([0-9]+) test_acc=([0-9.]+) train_s=([0-9.]+) .*/\1 \2 \3 - -/p' "$out/pytorch.log" \
    > "$out/pytorch.rows"
fi

device=$("$bin/fusetrain" inspect "$out/fusetrain-r$ranks-s0.h5" /ranks/device | head -n 1)
bash "$here/fast_cifar_summary.sh" "$out" "$seeds" "fast CIFAR-10 recipe $(basename "$config"), seeds 0-$((seeds - 1)) interleaved, data $data, \
device $device, fusetrain on $ranks rank(s) after ${WARMUP:-5} warm-up steps, train.max_steps ${steps:-unset}" |
  tee "$out/summary.md"
