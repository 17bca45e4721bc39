#!/usr/bin/env bash
# What may change between a stop and its resume: where the run computes may (backend, threads: the job
# moved to another partition), what it computes may not (a learning rate, a batch size); those
# refusals name every differing key with both values (or, for a number of ranks the batch cannot be split
# over, the elastic rule), and leave the checkpoint in place.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data"
# Each case starts the run afresh under the same name after an earlier case finished it: output.overwrite
# lets it (a finished run's name is otherwise numbered).
write_config "$WORK/run.yaml" "$WORK/data" "data: {path: $WORK/data, batch_size: 16}" \
  "train: {epochs: 4, threads: 1, seed: 7, device: cpu}" "distributed: {backend: gloo, stall_timeout_s: 20}" \
  "output: {dir: $WORK/runs, name: moved, overwrite: true}"
checkpoint=$WORK/runs/moved.ckpt

# 600 images on 2 ranks at batch 16: 18 optimizer steps per epoch, so step 23 is the 5th step of epoch 2.
stop_step=23

# stop: 2 ranks over Gloo stop as on SIGUSR1 after exactly $stop_step optimizer steps (the test aid
# FUSETRAIN_TEST_STOP_AT_STEP: no race against a signal, however fast the host); the checkpoint must be there.
# Real signal delivery is failure.signal_resume's business.
stop() {
  # shellcheck disable=SC2086
  launch "stop_$1" env FUSETRAIN_TEST_STOP_AT_STEP=$stop_step $FUSETRAIN_MPIRUN -np 2 "$FT" train \
    --config "$WORK/run.yaml"
  wait_job 120
  expect_status 75
  expect_message "^stopped by signal at epoch 2, step 5; checkpoint $checkpoint\$"
  [ -f "$checkpoint" ] || ft_fail "no checkpoint $checkpoint"
  pass
}

other_backend() {
  stop backend
  run_case resume_other_backend 180 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/run.yaml" \
    --set distributed.backend=mpi --set train.threads=2 --set distributed.bucket_mib=4
  expect_status 0
  expect_message "^resuming from $checkpoint at epoch 2, step 5$"
  expect_message "backend mpi"
  expect_message "^epoch   4/4 "
  expect_absent "$checkpoint"
  pass
}

other_learning_rate() {
  stop lr
  run_case resume_other_lr 120 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/run.yaml" \
    --set optimizer.lr=0.05 --set data.batch_size=32
  expect_failure
  expect_message "checkpoint $checkpoint was written by a run with a different config: data.batch_size: 16 in the checkpoint, 32 now; optimizer.lr: 0.01 in the checkpoint, 0.05 now\. Only train.epochs"
  [ -f "$checkpoint" ] || ft_fail "the refused checkpoint was removed"
  pass
}

# 2 ranks x 16 = 32 images per step do not split over 3 ranks: refused (the global batch is kept by
# default), naming the option that would allow it, and the checkpoint stays for a resume that can.
other_rank_count() {
  run_case resume_three_ranks 120 $FUSETRAIN_MPIRUN -np 3 "$FT" train --config "$WORK/run.yaml"
  expect_failure
  expect_message "elastic.batch global: the run's global batch of 32 images per step cannot be split over 3 ranks"
  expect_message "set elastic.batch: local"
  expect_count 1 "error:"
  [ -f "$checkpoint" ] || ft_fail "the refused checkpoint was removed"
  pass
}

check other_backend
check other_learning_rate
check other_rank_count
finish "resume across devices and backends, refusals name the keys"
