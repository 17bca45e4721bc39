#!/usr/bin/env bash
# train.checkpoint_every_s: 2 ranks write a checkpoint mid-epoch once rank 0's clock says the time is up
# and train on; killed (SIGKILL, no chance to save) after one, the same command resumes at that very step.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data"
every_s=3
write_config "$WORK/run.yaml" "$WORK/data" \
  "train: {epochs: 1000, threads: 1, seed: 7, device: cpu, checkpoint_every_s: $every_s}"
ckpt=$WORK/runs/case.ckpt
line="^checkpoint after [0-9]+ s at epoch [0-9]+, step [0-9]+: $ckpt\$"

# Killed at once after the first time-based checkpoint: the next one is $every_s s away.
killed_after_one() {
  # shellcheck disable=SC2086
  launch killed $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/run.yaml"
  wait_for_line "$OUT" "$line" 60 "$JOB"
  kill_tree "$JOB"
  wait_job 30
  expect_count 1 "$line"
  expect_message "^checkpoint after ($every_s|$((every_s + 1))) s at epoch"
  expect_no_message "^stopped by signal"
  [ -f "$ckpt" ] || ft_fail "no checkpoint $ckpt"
  pass
}

resumes_at_that_step() {
  local epoch step
  epoch=$(sed -nE 's/^checkpoint after [0-9]+ s at epoch ([0-9]+), step.*/\1/p' "$WORK/killed.log")
  step=$(sed -nE 's/^checkpoint after [0-9]+ s at epoch [0-9]+, step ([0-9]+):.*/\1/p' "$WORK/killed.log")
  [ "$step" -gt 0 ] || ft_fail "the time-based checkpoint was not written mid-epoch (step $step)"
  # shellcheck disable=SC2086
  run_case resumed 120 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/run.yaml" --set train.epochs="$epoch"
  expect_status 0
  expect_message "^resuming from $ckpt at epoch $epoch, step $step\$"
  expect_message "^epoch +$epoch/$epoch "
  expect_message "^results: "
  [ ! -e "$ckpt" ] || ft_fail "the checkpoint was left after the results were written"
  pass
}

check killed_after_one
check resumes_at_that_step
finish "time-based checkpoints"
