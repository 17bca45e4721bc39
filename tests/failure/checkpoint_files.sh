#!/usr/bin/env bash
# The run's checkpoint files: the last train.keep_checkpoints are kept, the newest at <name>.ckpt; a damaged
# newest one (truncated, or one byte flipped) is reported and the run resumes from the one before and
# finishes; every file of a finished run is removed, the damaged ones excepted (kept as <name>.damaged).
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data" 300
write_config "$WORK/run.yaml" "$WORK/data" \
  "train: {epochs: 4, threads: 1, seed: 7, device: cpu, checkpoint_every: 1, keep_checkpoints: 3}"
ckpt=$WORK/runs/case.ckpt

# 300 images on 2 ranks at batch 32: 4 optimizer steps per epoch, so step 14 is the 2nd step of epoch 4.
stop_step=14

# stop NAME [ARGS...]: 2 ranks checkpoint after epochs 1, 2 and 3 and stop at step 2 of epoch 4: four saves.
stop() {
  rm -rf "$WORK/runs"
  # shellcheck disable=SC2086
  run_case "$1" 120 env FUSETRAIN_TEST_STOP_AT_STEP=$stop_step $FUSETRAIN_MPIRUN -np 2 "$FT" train \
    --config "$WORK/run.yaml" "${@:2}"
  expect_status 75
  expect_message "^stopped by signal at epoch 4, step 2; checkpoint $ckpt\$"
}

# resume NAME: the same command again, run to the end.
resume() {
  # shellcheck disable=SC2086
  run_case "$1" 120 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/run.yaml"
  expect_status 0
  expect_message "^epoch   4/4 "
  expect_message "^results: $WORK/runs/case\.h5"
}

checkpoint_files() { (cd "$WORK/runs" && find . -maxdepth 1 -name 'case.ckpt*' -printf '%f\n' | sort | tr '\n' ' '); }

keeps_the_last_three() {
  stop keep
  [ "$(checkpoint_files)" = "case.ckpt case.ckpt.1 case.ckpt.2 " ] ||
    ft_fail "after four saves with keep_checkpoints 3: $(checkpoint_files)"
  expect_no_partial "$WORK/runs"
  resume keep_resume
  expect_message "^resuming from $ckpt at epoch 4, step 2\$"
  expect_no_message "^warning"
  [ -z "$(checkpoint_files)" ] || ft_fail "checkpoints left after the results were written: $(checkpoint_files)"
  pass
}

# damaged_newest NAME HOW REASON: the newest file damaged by HOW; the run must name it and REASON, resume
# from the save after epoch 3 (case.ckpt.1), finish, and keep the damaged file aside.
damaged_newest() {
  stop "$1"
  "$2" "$ckpt"
  resume "$1_resume"
  expect_message "^warning: checkpoint $ckpt is damaged \($3[^)]*\): resuming from the previous one $ckpt\.1 "
  expect_message "^warning: damaged checkpoint $ckpt moved aside to $ckpt\.damaged$"
  expect_count 2 "^warning"
  expect_message "^resuming from $ckpt\.1 at epoch 4, step 0\$"
  [ -f "$ckpt.damaged" ] || ft_fail "the damaged file was not kept as $ckpt.damaged"
  [ "$(checkpoint_files)" = "case.ckpt.damaged " ] || ft_fail "files left: $(checkpoint_files)"
  pass
}
truncate_half() { truncate -s $(($(stat -c %s "$1") / 2)) "$1"; }

check keeps_the_last_three
check damaged_newest truncated truncate_half "no checksum"
check damaged_newest flipped flip_byte "checksum mismatch"
finish "checkpoint rotation and damaged checkpoints"
