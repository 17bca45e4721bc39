#!/usr/bin/env bash
# The table of tools/bench/fast_cifar.sh from its per-seed rows: for each side (fusetrain, fusetrain with CUDA
# graphs, airbench94, airbench94_muon, the PyTorch recipe) the seeds, test accuracy, training seconds after the
# warm-up and cold process seconds as mean ± sample standard deviation (min-max), the optimizer steps, the time
# ratios and each side's mean seconds per epoch.
#
# usage: tools/bench/fast_cifar_summary.sh OUT SEEDS TITLE
#   OUT/<side>.rows: one line per seed, "seed accuracy train_s cold_s steps" ("-" where a side has no figure);
#   OUT/<side>.epochs: "seed s1,s2,..." per seed. A side whose rows are missing or short of SEEDS is left out,
#   named; fusetrain's must be complete.
set -euo pipefail
out=${1:?usage: fast_cifar_summary.sh OUT SEEDS TITLE}
seeds=${2:?usage: fast_cifar_summary.sh OUT SEEDS TITLE}
title=${3:-fast CIFAR-10 recipe}
sides=(fusetrain fusetrain-graphs airbench94 airbench94_muon pytorch)
declare -A label=([fusetrain]=fusetrain [fusetrain-graphs]="fusetrain, CUDA graphs" [airbench94]=airbench94
                  [airbench94_muon]=airbench94_muon [pytorch]=PyTorch)

# cell FILE COLUMN DIGITS: "mean ± sd (min-max)" of a column, "-" when it holds no numbers.
cell() {
  awk -v c="$2" -v d="$3" '$c != "-" { x = $c + 0; n++; s += x; q += x * x; if (n == 1 || x < lo) lo = x; if (n == 1 || x > hi) hi = x }
    END { if (n == 0) { print "-"; exit }
          m = s / n; v = n > 1 ? (q - n * m * m) / (n - 1) : 0; if (v < 0) v = 0
          f = "%." d "f"; printf f " ± " f " (" f "-" f ")\n", m, sqrt(v), lo, hi }' "$1"
}
mean() { awk -v c="$2" '$c != "-" { s += $c; n++ } END { if (n) printf "%.6f\n", s / n }' "$1"; }
steps() { awk '{ v[$5] = 1 } END { for (k in v) t = t (t == "" ? "" : ", ") k; print t }' "$1"; }
ratio() {  # WHAT A B: "time ratio WHAT (means): A/B", when both are known
  [ -n "$2" ] && [ -n "$3" ] || return 0
  awk -v what="$1" -v a="$2" -v b="$3" 'BEGIN { printf "time ratio %s (means): %.3f\n", what, a / b }'
}
# Mean seconds of each epoch over the seeds.
epochs() {
  awk '{ n = split($2, e, ","); for (i = 1; i <= n; ++i) { s[i] += e[i]; c[i]++ } if (n > m) m = n }
       END { for (i = 1; i <= m; ++i) printf "%s%.3f", (i > 1 ? " " : ""), s[i] / c[i]; print "" }' "$1"
}

present=()
for side in "${sides[@]}"; do
  [ -f "$out/$side.rows" ] || continue
  if [ "$(wc -l < "$out/$side.rows")" -ne "$seeds" ]; then
    [ "$side" != fusetrain ] || { echo "fast_cifar_summary.sh: fusetrain's results are incomplete" >&2; exit 1; }
    echo "fast_cifar_summary.sh: no ${label[$side]} row (results incomplete)"
    continue
  fi
  present+=("$side")
done
echo "$title"
echo
echo "| | seeds | test acc | train s (after warm-up) | cold s (process start to last epoch) | steps |"
echo "|---|---|---|---|---|---|"
for side in "${present[@]}"; do
  f=$out/$side.rows
  echo "| ${label[$side]} | $(wc -l < "$f") | $(cell "$f" 2 4) | $(cell "$f" 3 3) | $(cell "$f" 4 2) | $(steps "$f") |"
done
echo
declare -A train cold
for side in "${present[@]}"; do
  train[$side]=$(mean "$out/$side.rows" 3) cold[$side]=$(mean "$out/$side.rows" 4)
done
for side in fusetrain fusetrain-graphs; do
  [ -n "${train[$side]:-}" ] || continue
  for reference in airbench94 airbench94_muon; do
    ratio "${label[$side]} / $reference, train s" "${train[$side]}" "${train[$reference]:-}"
    ratio "${label[$side]} / $reference, cold s" "${cold[$side]}" "${cold[$reference]:-}"
  done
  ratio "${label[$side]} / PyTorch" "${train[$side]}" "${train[pytorch]:-}"
done
echo
for side in "${present[@]}"; do
  [ -s "$out/$side.epochs" ] || continue
  echo "epoch seconds, mean over seeds, ${label[$side]}: $(epochs "$out/$side.epochs")"
done
