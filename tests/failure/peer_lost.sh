#!/usr/bin/env bash
# A peer lost as NCCL reports it, on the CPU: once 3 steps are done rank 1 freezes (SIGSTOP, a lost node) and
# rank 0's next collective fails with the asynchronous error NCCL gives for a peer that is gone (ncclRemoteError,
# planted through the backend's test seam by FUSETRAIN_TEST_PEER_LOST). The error path of a GPU run: rank 0 must
# wait for the heartbeat to name rank 1, then end the job with status 76 (the job scripts requeue on it), long
# before the stall timeout would have.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
"$FT" info | grep -Eq '^backends: (.*, )?nccl(,|$)' ||
  { echo "SKIP: this fusetrain is built without NCCL, whose error the case plants"; exit 77; }
stall=60
prep_data "$WORK/data" 600
write_config "$WORK/run.yaml" "$WORK/data" "data: {path: $WORK/data, batch_size: 16}" \
  "train: {epochs: 20, threads: 1, checkpoint_every: 0, device: cpu}" "distributed: {backend: mpi, stall_timeout_s: $stall}"

peer_lost() {
  run_case peer_lost $((stall + 60)) env FUSETRAIN_TEST_PEER_LOST=1@3 $FUSETRAIN_MPIRUN -np 2 "$FT" train \
    --config "$WORK/run.yaml"
  expect_status 76
  expect_message "rank 0 \([^)]*\): error: all-reduce #[0-9]+ \(bucket [0-9]+ of step 4, .*\) failed: the mpi transport lost a peer: rank 1 \([^)]*\) not heard from for [0-9.]+ s \(dead or hung\)"
  # NCCL's own words for ncclRemoteError
  expect_message "\[mpi: NCCL call failed: asynchronous NCCL error: remote process exited or there was a network error"
  expect_message "\(exit 76: a rank was lost; the job scripts requeue the run\)$"
  # The heartbeat calls a peer silent after 2 s: far inside the 60 s stall timeout (measured: see tests/README.md).
  expect_faster_than 30
  expect_no_rank "$WORK/run.yaml"
  pass
}

# A malformed aid is refused by name, so that a test cannot pass with its aid ignored.
malformed_aid() {
  run_case malformed 60 env FUSETRAIN_TEST_PEER_LOST=1 "$FT" train --config "$WORK/run.yaml"
  expect_failure
  expect_message "FUSETRAIN_TEST_PEER_LOST must be R@N \(rank R lost once N steps are done\), got '1'"
  pass
}

check peer_lost
check malformed_aid
finish "peer_lost"
