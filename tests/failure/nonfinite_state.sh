#!/usr/bin/env bash
# No checkpoint or model file ever holds an inf or NaN: a NaN planted in a weight or in the optimizer's
# state (the test aid FUSETRAIN_TEST_NAN_AFTER_STEP) stops the save that would write it, naming the tensor,
# and a non-finite test loss stops the epoch's checkpoint; the last good checkpoint stays.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data"
# 600 training images at batch 100 on one rank: six optimizer steps an epoch.
write_config "$WORK/run.yaml" "$WORK/data" "data: {path: $WORK/data, batch_size: 100}" \
  "optimizer: {name: sgd, lr: 0.01, momentum: 0.9}" \
  "train: {epochs: 3, threads: 1, seed: 7, device: cpu, checkpoint_every: 1}" "output: {dir: $WORK/runs, name: nan}"
ckpt=$WORK/runs/nan.ckpt

# refused NAME NAN STOP REGEX: plants a NaN after step NAN (STOP: also stop there), expects the refusal.
refused() {
  local name=$1 stop=$3 expected=$4 vars=(FUSETRAIN_TEST_NAN_AFTER_STEP="$2")
  rm -rf "$WORK/runs"
  [ "$stop" = - ] || vars+=(FUSETRAIN_TEST_STOP_AT_STEP="$stop")
  run_case "$name" 120 env "${vars[@]}" "$FT" train --config "$WORK/run.yaml"
  expect_failure
  [ "$STATUS" -ne 75 ] || ft_fail "the run stopped as resumable with a NaN in its state"
  expect_message "error: $expected"
  expect_no_partial "$WORK/runs"
  expect_absent "$WORK/runs/nan.model"
  expect_absent "$WORK/runs/nan.h5"
  pass
}

# Step 3's forward was finite; the NaN lands after it, and the stop's checkpoint would hold it.
check refused weight_at_stop 3 3 "non-finite values in 'conv1\.weight': checkpoint $ckpt is not written"
check refused optimizer_at_stop 3:optimizer 3 "non-finite values in 'optimizer\.group0\.param0\.momentum_buffer': checkpoint $ckpt is not written"
# The last step of epoch 1: its loss was finite, the test loss after it is not, and the epoch's checkpoint
# is not written.
check refused test_loss_at_epoch_end 6 - "non-finite test loss after epoch 1 with precision fp32: the epoch's checkpoint is not written"
no_checkpoint() { CASE=test_loss_left_nothing; expect_absent "$ckpt"; echo "PASS [$CASE] no checkpoint written"; }
check no_checkpoint

# A NaN in the optimizer's state after the last step of the run reaches no file: the run's end writes the
# model file, which holds weights only (finite here), and no checkpoint is left.
last_step_state() {
  rm -rf "$WORK/runs"
  run_case last_step_state 120 env FUSETRAIN_TEST_NAN_AFTER_STEP=18:optimizer "$FT" train --config "$WORK/run.yaml"
  expect_status 0
  expect_absent "$ckpt"
  pass
}
check last_step_state

# A NaN weight after the last step: the model file (and the results naming it) are refused, the checkpoints
# of the run are kept for a resume from the last good one.
model_file() {
  rm -rf "$WORK/runs"
  run_case model_file 120 env FUSETRAIN_TEST_NAN_AFTER_STEP=18 "$FT" train --config "$WORK/run.yaml"
  expect_failure
  expect_message "error: non-finite values in 'conv1\.weight' at the end of training: model file $WORK/runs/nan\.model and the results are not written; the run's checkpoints are kept"
  expect_absent "$WORK/runs/nan.model"
  expect_absent "$WORK/runs/nan.h5"
  [ -f "$ckpt" ] || ft_fail "the last good checkpoint was removed"
  pass
}
check model_file
finish "no file holds a non-finite tensor"
