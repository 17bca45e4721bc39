#!/usr/bin/env bash
# Same seed, same world size, CPU: two runs must give bit-identical per-epoch metrics (loss, accuracy, lr)
# in their results files, and a different seed must not (so the comparison can fail).
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data"
write_config "$WORK/run.yaml" "$WORK/data" "data: {path: $WORK/data, batch_size: 32, shuffle: global, augment: {flip: true, crop_padding: 2}}"

train() {
  # shellcheck disable=SC2086
  run_case "$1" 120 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/run.yaml" --set "output.name=$1" "${@:2}"
  expect_status 0
  expect_message "^results: $WORK/runs/$1\.h5"
  [ "$(metrics "$1" | grep -c "^/epochs/")" -eq 7 ] || ft_fail "cannot read the 7 /epochs columns of $1.h5"
  pass
}

# The per-epoch columns that must not depend on timing, printed with all 17 digits.
metrics() {
  local column
  for column in epoch train_loss train_acc test_loss test_acc lr evaluated; do
    echo "/epochs/$column"
    "$FT" inspect "$WORK/runs/$1.h5" "/epochs/$column"
  done
}

compare() {
  CASE="compare_$1_$2"
  if [ "$3" = same ]; then
    diff <(metrics "$1") <(metrics "$2") > "$WORK/$1.diff" || { OUT=$WORK/$1.diff; ft_fail "$1 and $2 differ"; }
  else
    if diff -q <(metrics "$1") <(metrics "$2") > /dev/null; then ft_fail "seeds 7 and 8 gave identical metrics"; fi
  fi
  echo "PASS [$CASE] per-epoch metrics of $1 and $2 are $( [ "$3" = same ] && echo identical || echo different)"
}

check train first
check train second
check train other_seed --set train.seed=8
check compare first second same
check compare first other_seed different
finish "determinism"
