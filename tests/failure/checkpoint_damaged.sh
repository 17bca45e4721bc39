#!/usr/bin/env bash
# Every checkpoint of a run damaged: the run stops before any epoch naming each file and what is wrong, and
# leaves them byte for byte; with --discard-damaged-checkpoints it warns, moves them aside and starts afresh.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data" 300
write_config "$WORK/run.yaml" "$WORK/data" \
  "train: {epochs: 2, threads: 1, seed: 7, device: cpu, checkpoint_every: 1, keep_checkpoints: 2}"
ckpt=$WORK/runs/case.ckpt

# Two saves (after epoch 1, and the stop at step 2 of epoch 2 on 4 steps an epoch), then both damaged: the
# newest truncated, the older one with the byte in its middle flipped.
two_damaged() {
  # shellcheck disable=SC2086
  run_case stop 120 env FUSETRAIN_TEST_STOP_AT_STEP=6 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/run.yaml"
  expect_status 75
  if [ ! -f "$ckpt" ] || [ ! -f "$ckpt.1" ]; then ft_fail "two checkpoints expected: $(ls "$WORK/runs")"; fi
  truncate -s 4096 "$ckpt"
  flip_byte "$ckpt.1"
  sha256sum "$ckpt" "$ckpt.1" > "$WORK/damaged.sha256"
  pass
}

refused() {
  # shellcheck disable=SC2086
  run_case refused 120 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/run.yaml"
  expect_failure
  expect_message "error: no checkpoint of this run can be used, every one is damaged: $ckpt \(no checksum[^)]*\); $ckpt\.1 \(checksum mismatch\)\. They are left in place: .*--discard-damaged-checkpoints"
  expect_no_message "^epoch "
  expect_no_message "^resuming"
  sha256sum --status -c "$WORK/damaged.sha256" || ft_fail "the damaged checkpoints were changed or removed"
  pass
}

discarded() {
  # shellcheck disable=SC2086
  run_case discarded 120 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/run.yaml" --discard-damaged-checkpoints
  expect_status 0
  expect_message "^warning: no checkpoint of this run can be used, every one is damaged: $ckpt .*--discard-damaged-checkpoints: they are moved aside .* and the run starts afresh"
  expect_count 1 "^warning: no checkpoint"
  expect_count 2 "^warning: damaged checkpoint $ckpt(\.1)? moved aside to $ckpt(\.1)?\.damaged$"
  expect_no_message "^resuming"
  expect_message "^epoch   1/2 "
  expect_message "^results: "
  if [ ! -f "$ckpt.damaged" ] || [ ! -f "$ckpt.1.damaged" ]; then
    ft_fail "the damaged files were not moved aside: $(ls "$WORK/runs")"
  fi
  expect_absent "$ckpt"
  expect_absent "$ckpt.1"
  pass
}

check two_damaged
check refused
check discarded
finish "every checkpoint damaged"
