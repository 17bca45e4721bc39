#!/usr/bin/env bash
# Time to accuracy of the fast CIFAR-10 recipe: fusetrain (configs/fast/cifar10.yaml) and the same recipe
# in PyTorch (fast_cifar_pytorch.py) and, with AIRBENCH, the public airbench94 (airbench94.py), on the same
# shards and device, several seeds each, as one table.
#
# usage: tools/bench/fast_cifar.sh DATA_DIR [SEEDS]      (SEEDS: default 10, seeds 0 .. SEEDS-1)
#
# Environment (defaults in brackets):
#   FUSETRAIN_BIN  folder with fusetrain [build/bin]       PYTHON  Python with torch and h5py [python3]
#   OUT            results files and logs [runs/fast_cifar]
#   RANKS          fusetrain ranks; > 1 runs under $MPIRUN [1]   MPIRUN  launcher [mpirun]
#   SET            extra `--set key=value` overrides for fusetrain, space-separated, e.g.
#                  "data.batch_size=512" at 2 ranks (keep the global batch at 1024)
#   PY_ARGS        extra arguments for fast_cifar_pytorch.py
#   AIRBENCH       a folder holding the airbench package, or "installed": also run the public airbench94
#                  (airbench94.py, CUDA only) on the same shards and seeds and add its row and time ratio
#   GRAPHS         non-empty: also run fusetrain with train.cuda_graphs (GPU only), its own row and ratios
#                  (either optional row that fails is named and left out; the rest of the table stands)
# Both sides time only training (fusetrain: the sum of its epoch clocks, which stop before evaluation;
# PyTorch: CUDA events around the training loop), so the ratio compares like with like.
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

sets=(--set "data.path=$data" --set "output.dir=$out")
for kv in ${SET:-}; do sets+=(--set "$kv"); done
launch=()
if [ "$ranks" -gt 1 ]; then
  # shellcheck disable=SC2206  # MPIRUN is a command line
  launch=(${MPIRUN:-mpirun} -np "$ranks")
fi

# fusetrain_seeds TAG [--set k=v ...]: every seed through fusetrain, then TAG.csv and TAG.pairs ("accuracy
# seconds" per seed) from its report.
fusetrain_seeds() {
  local tag=$1 s name files=()
  shift
  for ((s = 0; s < seeds; ++s)); do
    name=$tag-r$ranks-s$s
    rm -f "$out/$name.h5"
    "${launch[@]}" "$bin/fusetrain" train --config "$root/configs/fast/cifar10.yaml" "${sets[@]}" "$@" \
      --set "train.seed=$s" --set "output.name=$name" > "$out/$name.log" 2>&1 ||
      { echo "fast_cifar.sh: fusetrain seed $s failed; see $out/$name.log" >&2; tail -n 5 "$out/$name.log" >&2; exit 1; }
    files+=("$out/$name.h5")
  done
  "$bin/fusetrain" report --csv "${files[@]}" > "$out/$tag.csv"
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
           { print $col["final_acc_%"] / 100, $col["train_s"] }' "$out/$tag.csv" > "$out/$tag.pairs"
  [ "$(wc -l < "$out/$tag.pairs")" -eq "$seeds" ] || { echo "fast_cifar.sh: fusetrain ($tag) results incomplete" >&2; exit 1; }
}
fusetrain_seeds fusetrain
# The optional rows never cost the table: a failure is named and its row left out.
if [ -n "${GRAPHS:-}" ] && ! (fusetrain_seeds fusetrain-graphs --set train.cuda_graphs=true); then
  echo "fast_cifar.sh: no CUDA graphs row (the runs failed; see $out/fusetrain-graphs-*.log)"
  GRAPHS=
fi

# shellcheck disable=SC2086  # PY_ARGS is an argument list
"$python" "$here/fast_cifar_pytorch.py" --data "$data" --seed 0 --seeds "$seeds" ${PY_ARGS:-} > "$out/pytorch.log" 2>&1 ||
  { echo "fast_cifar.sh: the PyTorch recipe failed; see $out/pytorch.log" >&2; tail -n 5 "$out/pytorch.log" >&2; exit 1; }

if [ -n "${AIRBENCH:-}" ]; then
  airbench_args=()
  [ "$AIRBENCH" = installed ] || airbench_args=(--airbench "$AIRBENCH")
  if ! "$python" "$here/airbench94.py" --data "$data" --seed 0 --seeds "$seeds" --work "$out/airbench94" \
         "${airbench_args[@]}" > "$out/airbench94.log" 2> "$out/airbench94.err"; then
    echo "fast_cifar.sh: no airbench94 row (it failed; see $out/airbench94.err):"
    tail -n 5 "$out/airbench94.err"
    AIRBENCH=
  fi
fi

# Per seed "accuracy seconds" pairs from each side, then one table.
sed -nE 's/^fast_cifar seed=[0-9]+ test_acc=([0-9.]+) train_s=([0-9.]+) .*/\1 \2/p' "$out/pytorch.log" > "$out/pytorch.pairs"
[ "$(wc -l < "$out/pytorch.pairs")" -eq "$seeds" ] || { echo "fast_cifar.sh: PyTorch results incomplete" >&2; exit 1; }
if [ -n "${AIRBENCH:-}" ]; then
  sed -nE 's/^airbench94 seed=[0-9]+ test_acc=([0-9.]+) train_s=([0-9.]+) .*/\1 \2/p' "$out/airbench94.log" > "$out/airbench94.pairs"
  [ "$(wc -l < "$out/airbench94.pairs")" -eq "$seeds" ] || { echo "fast_cifar.sh: no airbench94 row (results incomplete)"; AIRBENCH=; }
fi

stats() {  # FILE -> "acc_mean acc_min acc_max s_mean s_min s_max"
  awk 'NR == 1 { amin = amax = $1; tmin = tmax = $2 }
       { a += $1; t += $2; if ($1 < amin) amin = $1; if ($1 > amax) amax = $1; if ($2 < tmin) tmin = $2; if ($2 > tmax) tmax = $2 }
       END { printf "%.4f %.4f %.4f %.3f %.3f %.3f\n", a / NR, amin, amax, t / NR, tmin, tmax }' "$1"
}
ratio() {  # WHAT A B -> "time ratio WHAT (means): A/B"
  awk -v what="$1" -v a="$2" -v b="$3" 'BEGIN { printf "time ratio %s (means): %.3f\n", what, a / b }'
}
read -r fa fa_min fa_max ft ft_min ft_max < <(stats "$out/fusetrain.pairs")
read -r pa pa_min pa_max pt pt_min pt_max < <(stats "$out/pytorch.pairs")
[ -z "${AIRBENCH:-}" ] || read -r aa aa_min aa_max at at_min at_max < <(stats "$out/airbench94.pairs")
[ -z "${GRAPHS:-}" ] || read -r ga ga_min ga_max gt gt_min gt_max < <(stats "$out/fusetrain-graphs.pairs")
device=$(sed -nE 's/.*device_name=(.*)$/\1/p' "$out/pytorch.log" | tail -n 1)
{
  echo "fast CIFAR-10 recipe, $seeds seeds, data $data, fusetrain on $ranks rank(s), device ${device:-unknown}"
  echo
  echo "| | test acc mean | min | max | train s mean | min | max |"
  echo "|---|---|---|---|---|---|---|"
  echo "| fusetrain | $fa | $fa_min | $fa_max | $ft | $ft_min | $ft_max |"
  [ -z "${GRAPHS:-}" ] || echo "| fusetrain, CUDA graphs | $ga | $ga_min | $ga_max | $gt | $gt_min | $gt_max |"
  echo "| PyTorch | $pa | $pa_min | $pa_max | $pt | $pt_min | $pt_max |"
  [ -z "${AIRBENCH:-}" ] || echo "| airbench94 | $aa | $aa_min | $aa_max | $at | $at_min | $at_max |"
  echo
  ratio "fusetrain / PyTorch" "$ft" "$pt"
  [ -z "${AIRBENCH:-}" ] || ratio "fusetrain / airbench94" "$ft" "$at"
  [ -z "${GRAPHS:-}" ] || ratio "fusetrain with CUDA graphs / PyTorch" "$gt" "$pt"
  [ -z "${GRAPHS:-}" ] || [ -z "${AIRBENCH:-}" ] || ratio "fusetrain with CUDA graphs / airbench94" "$gt" "$at"
} | tee "$out/summary.md"
