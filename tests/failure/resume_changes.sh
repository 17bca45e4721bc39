#!/usr/bin/env bash
# What may change between a stop and its resume: where the run computes may (backend, threads: the job
# moved to another partition), what it computes may not (a learning rate, the number of ranks); those
# refusals name every differing key with both values, and leave the checkpoint in place.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data"
write_config "$WORK/run.yaml" "$WORK/data" "data: {path: $WORK/data, batch_size: 16}" \
  "train: {epochs: 4, threads: 1, seed: 7}" "distributed: {backend: gloo, stall_timeout_s: 20}" \
  "output: {dir: $WORK/runs, name: moved}"
checkpoint=$WORK/runs/moved.ckpt

# stop: 2 ranks over Gloo, SIGUSR1 to both once epoch 1 is done; the checkpoint must be there.
stop() {
  local pid rank
  launch "stop_$1" $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/run.yaml"
  wait_for_line "$OUT" "^epoch   1/4" 120 "$JOB"
  for rank in 0 1; do
    pid=$(rank_pid "train --config $WORK/run.yaml" "$rank") || ft_fail "rank $rank not found"
    kill -USR1 "$pid"
  done
  wait_job 60
  expect_status 75
  [ -f "$checkpoint" ] || ft_fail "no checkpoint $checkpoint"
  pass
}

other_backend() {
  stop backend
  run_case resume_other_backend 180 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/run.yaml" \
    --set distributed.backend=mpi --set train.threads=2 --set distributed.bucket_mib=4
  expect_status 0
  expect_message "^resuming from $checkpoint at epoch 2, step [0-9]+$"
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

other_rank_count() {
  run_case resume_three_ranks 120 $FUSETRAIN_MPIRUN -np 3 "$FT" train --config "$WORK/run.yaml"
  expect_failure
  expect_message "different config: ranks: 2 in the checkpoint, 3 now"
  pass
}

check other_backend
check other_learning_rate
check other_rank_count
finish "resume across devices and backends, refusals name the keys"
