#!/usr/bin/env bash
# A stop request checks the loss before it saves: with the GPU's cadence of loss checks on the CPU
# (train.loss_check_every: 50), a run that diverged after its last good checkpoint and is then asked to
# stop must fail naming the step, keep that checkpoint byte for byte and write no results file.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data"
# sgd at lr 1e30: the first step's loss is finite, every later one is not.
write_config "$WORK/diverge.yaml" "$WORK/data" "optimizer: {name: sgd, lr: 1.0e+30}" \
  "train: {epochs: 2, threads: 1, seed: 7, device: cpu, loss_check_every: 50}"
ckpt=$WORK/runs/case.ckpt

good_checkpoint() {
  run_case good 60 env FUSETRAIN_TEST_STOP_AT_STEP=1 "$FT" train --config "$WORK/diverge.yaml"
  expect_status 75
  expect_message "^stopped by signal at epoch 1, step 1; checkpoint $ckpt"
  [ -f "$ckpt" ] || ft_fail "no checkpoint $ckpt after the stop"
  sha256sum "$ckpt" > "$WORK/good.sha256"
  pass
}

diverged_stop() {
  [ -f "$WORK/good.sha256" ] || ft_fail "the good checkpoint case did not run"
  run_case diverged 60 env FUSETRAIN_TEST_STOP_AT_STEP=5 "$FT" train --config "$WORK/diverge.yaml"
  expect_failure
  [ "$STATUS" -ne 75 ] || ft_fail "exit status 75: the diverged run saved a checkpoint as if it could resume"
  expect_message "^resuming from $ckpt at epoch 1, step 1$"
  expect_message "^fusetrain: error: non-finite training loss at optimizer step [0-9]+ \(epoch 1\)"
  expect_no_message "^stopped by signal"
  sha256sum --status -c "$WORK/good.sha256" || ft_fail "the diverged run overwrote the good checkpoint $ckpt"
  expect_absent "$WORK/runs/case.h5"
  pass
}

check good_checkpoint
check diverged_stop
finish "diverged_stop"
