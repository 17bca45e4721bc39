#!/usr/bin/env bash
# Ranks started with different configs (mpirun MPMD) must all stop, non-zero, with the differing ranks named,
# before any data is read or any collective of training starts; nothing is written.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data"
write_config "$WORK/a.yaml" "$WORK/data"
write_config "$WORK/b.yaml" "$WORK/data" "optimizer: {lr: 0.5}"

# Two ranks, rank 1 reads another file.
two_files() {
  # shellcheck disable=SC2086
  run_case mpmd_two_files 60 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/a.yaml" : \
    -np 1 "$FT" train --config "$WORK/b.yaml"
  expect_failure
  expect_message "rank\(s\) 1 differs from rank 0's: every rank must read the same config file and --set options"
  expect_no_message "^epoch "
  expect_absent "$WORK/runs/case.h5"
  # Measured 0.9-3.5 s over both cases, the default, AVX2 and AVX512 ISAs and a busy core (tests/README.md,
  # "Thresholds"); bound 30 s.
  expect_faster_than 30
  pass
}

# Three ranks, the last one with an extra --set: only rank 2 is named.
set_override() {
  # shellcheck disable=SC2086
  run_case mpmd_set_override 60 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/a.yaml" : \
    -np 1 "$FT" train --config "$WORK/a.yaml" --set data.batch_size=16
  expect_failure
  expect_message "rank\(s\) 2 differs from rank 0's"
  expect_no_message "rank\(s\) [01],|rank\(s\) 1 "
  expect_no_message "^epoch "
  # Measured 0.9-3.5 s over both cases, the default, AVX2 and AVX512 ISAs and a busy core (tests/README.md,
  # "Thresholds"); bound 30 s.
  expect_faster_than 30
  pass
}

check two_files
check set_override
# Every process has ended: none of the job's ranks is left running.
if pgrep -f -- "--config $WORK/a.yaml" > /dev/null; then FAILED+=("a rank is still running after the job ended"); fi
finish "ranks disagree"
