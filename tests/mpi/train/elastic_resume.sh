#!/usr/bin/env bash
# Elastic resume: a run stopped on 2 ranks and resumed on 1 and on 4 (global batch kept, data.shuffle global,
# fp64) must end with the per-epoch figures of the uninterrupted 2-rank run, record both segments, and say
# how the batch was re-split; a resume under elastic.batch local must scale the learning rate instead; a run
# with PowerSGD and synchronised BatchNorm resumes on 4 from the mean of the 2 ranks' error feedback.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/../../failure/lib.sh"
prep_data "$WORK/data" 960
# 960 images, 2 ranks x 16 = 32 per step: 30 steps per epoch; the stop after step 40 is epoch 2, step 10.
# No dropout: its masks come from per-rank streams, which a resume on another number of ranks re-deals.
write_config "$WORK/run.yaml" "$WORK/data" "model: {name: simple_cnn, dropout: 0}" \
  "data: {path: $WORK/data, batch_size: 16, shuffle: global, augment: {flip: true, crop_padding: 2}}" \
  "optimizer: {name: sgd, lr: 0.05, momentum: 0.9}" "precision: {dtype: fp64}" \
  "train: {epochs: 2, threads: 1, seed: 3, device: cpu}"
stop_step=40

run() {  # run NAME RANKS [ARGS...]
  # shellcheck disable=SC2086
  run_case "$1" 240 $FUSETRAIN_MPIRUN -np "$2" "$FT" train --config "$WORK/run.yaml" --set "output.name=$1" "${@:3}"
}

column() { "$FT" inspect "$WORK/runs/$1.h5" "$2"; }

# same_epochs A B: every per-epoch loss within 1e-12 (relative) and every accuracy within one image. In fp64
# the runs differ only in the order of sums (two ranks' halves against one rank's two micro-batches, or four
# quarters, and the test split sliced over 1, 2 or 4 ranks), about 1e-16 per sum; 60 steps of SGD kept the
# losses within 1.2e-16 and the accuracies identical (measured), so 1e-12 leaves room for other CPUs' kernels.
same_epochs() {
  local c worst
  for c in train_loss test_loss train_acc test_acc; do
    # A value that is not a number (nan, inf) is reported as such: a running maximum would drop it.
    worst=$(paste <(column "$1" "/epochs/$c") <(column "$2" "/epochs/$c") | awk -v c="$c" '
      $1 !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ || $2 !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ { bad = $1 " against " $2 }
      { d = $1 - $2; if (d < 0) d = -d; s = ($1 < 0 ? -$1 : $1); r = (c ~ /loss/) ? d / (s > 1 ? s : 1) : d
        if (r > w) w = r; n++ }
      END { if (bad != "") { print "not-a-number:" bad; exit } if (n != 2) { print "rows " n; exit } printf "%.3g\n", w }')
    echo "$1 against $2: $c differs by at most $worst"
    case $c in
      *loss) awk -v w="$worst" 'BEGIN { exit !(w + 0 == w && w <= 1e-12) }' || ft_fail "$c of $1 and $2 differ: $worst" ;;
      *acc) awk -v w="$worst" 'BEGIN { exit !(w + 0 == w && w <= 1.5 / 960) }' || ft_fail "$c of $1 and $2 differ: $worst" ;;
    esac
  done
}

segments_are() {  # segments_are NAME "WORLD SIZES" "START EPOCHS" "START STEPS"
  [ "$(column "$1" /segments/world_size | paste -sd' ')" = "$2" ] || ft_fail "$1: segment world sizes are not $2"
  [ "$(column "$1" /segments/start_epoch | paste -sd' ')" = "$3" ] || ft_fail "$1: segments do not start in epochs $3"
  [ "$(column "$1" /segments/start_step | paste -sd' ')" = "$4" ] || ft_fail "$1: segments do not start at steps $4"
}

reference() {
  run reference 2
  expect_status 0
  segments_are reference "2" "1" "0"
  pass
}

# stop_then_resume NAME RANKS SPLIT: stopped on 2 ranks after $stop_step steps, resumed on RANKS.
stop_then_resume() {
  FUSETRAIN_TEST_STOP_AT_STEP=$stop_step run "stop_$1" 2 --set "output.name=$1"
  expect_status 75
  run "$1" "$2"
  expect_status 0
  expect_message "^resuming on $2 ranks? \(the checkpoint was written on 2 ranks\): elastic.batch global keeps 32 images per step: $3 \(learning rate unchanged\)$"
  segments_are "$1" "2 $2" "1 2" "0 10"
  same_epochs reference "$1"
  pass
}

# elastic.batch local on 4 ranks: 4 x 16 = 64 images per step, twice the start's, so linear scaling doubles
# the learning rate; epoch 2 goes on from image 320 of its order (step 5 of 64).
local_rule() {
  FUSETRAIN_TEST_STOP_AT_STEP=$stop_step run stop_local 2 --set output.name=local
  expect_status 75
  run local 4 --set elastic.batch=local
  expect_status 0
  expect_message "^resuming on 4 ranks \(the checkpoint was written on 2 ranks\): elastic.batch local keeps data.batch_size 16 per rank: 64 images per step \(4 ranks x 16\) against 32 at the start; elastic.lr_scaling linear multiplies the learning rate by 2$"
  segments_are local "2 4" "1 2" "0 5"
  [ "$(column local /segments/lr_factor | paste -sd' ')" = "1 2" ] || ft_fail "lr factors are not 1 2"
  "$FT" report --segments "$WORK/runs/local.h5" > "$WORK/segments.md" || ft_fail "report --segments failed"
  OUT=$WORK/segments.md
  expect_message "^\| local +\| 2 +\| 4 +\|"
  pass
}

# PowerSGD's error feedback and synchronised BatchNorm through a stop on 2 ranks and a resume on 4: every new rank
# starts from the mean of the 2 saved ranks' error feedback (rank 0 says so), and the replicas stay identical,
# BatchNorm buffers included, every step (distributed.verify_replicas).
compressed() {
  write_config "$WORK/compressed.yaml" "$WORK/data" \
    "model: {name: conv_stack, sync_batchnorm: true, layers: [{type: conv, out: 8}, bn, relu, {type: maxpool, kernel: 2, stride: 2}, {type: linear}]}" \
    "data: {path: $WORK/data, batch_size: 16, shuffle: global}" "optimizer: {name: sgd, lr: 0.05, momentum: 0.9}" \
    "train: {epochs: 2, threads: 1, seed: 3, device: cpu}" \
    "distributed: {compression: powersgd, powersgd_rank: 2, powersgd_start_step: 5, verify_replicas: 1}"
  # shellcheck disable=SC2086
  FUSETRAIN_TEST_STOP_AT_STEP=$stop_step run_case stop_compressed 240 $FUSETRAIN_MPIRUN -np 2 "$FT" train \
    --config "$WORK/compressed.yaml" --set output.name=compressed
  expect_status 75
  # shellcheck disable=SC2086
  run_case compressed 240 $FUSETRAIN_MPIRUN -np 4 "$FT" train --config "$WORK/compressed.yaml" --set output.name=compressed
  expect_status 0
  expect_message "^per-rank state \(PowerSGD's error feedback\) of 2 ranks: each of the 4 ranks starts from their mean"
  segments_are compressed "2 4" "1 2" "0 10"
  pass
}

check reference
check stop_then_resume shrink 1 "1 rank x 16 x 2 accumulation steps"
check stop_then_resume grow 4 "4 ranks x 8"
check local_rule
check compressed
finish "elastic resume on 1 and 4 ranks matches the 2-rank run; PowerSGD and SyncBatchNorm resume on 4"
