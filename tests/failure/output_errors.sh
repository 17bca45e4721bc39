#!/usr/bin/env bash
# Output that cannot be written must be reported before training starts (no epoch line), naming the path:
# output.dir that is a file, lies under a file or in /proc, a results path taken by a folder, a bad timeline path.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data"
echo "a regular file" > "$WORK/plain_file"

# output_case NAME REGEX [fusetrain args...]: one rank, the run must fail before its first epoch.
output_case() {
  local name=$1 expected=$2
  shift 2
  write_config "$WORK/$name.yaml" "$WORK/data"
  run_case "$name" 60 "$FT" train --config "$WORK/$name.yaml" "$@"
  expect_failure
  expect_message "error: .*$expected"
  expect_no_message "^epoch "
  # Measured 0.8-2.7 s over the default, AVX2 and AVX512 ISAs and a busy core (tests/README.md, "Thresholds");
  # bound 30 s.
  expect_faster_than 30
  pass
}

check output_case dir_is_file "output directory $WORK/plain_file cannot be created" --set "output.dir=$WORK/plain_file"
check output_case dir_under_file "output directory $WORK/plain_file/runs cannot be created: Not a directory" \
  --set "output.dir=$WORK/plain_file/runs"
check output_case dir_in_proc "output directory /proc/fusetrain-[0-9]+ cannot be created" --set "output.dir=/proc/fusetrain-$$"

# The results file's own path is taken by a folder: found at start, not after all epochs.
mkdir -p "$WORK/blocked/case.h5"
check output_case results_path_blocked "$WORK/blocked/case\.h5" --set "output.dir=$WORK/blocked"

# The timeline file cannot be written: found at start, not after all epochs (and then without results).
check output_case timeline_unwritable "/proc/fusetrain-[0-9]+/timeline\.json" --set "distributed.timeline=/proc/fusetrain-$$/timeline.json"

# Two ranks: the job stops, rank 0 names the folder, no rank starts training.
mpirun_dir_is_file() {
  write_config "$WORK/mpirun.yaml" "$WORK/data"
  # shellcheck disable=SC2086
  run_case mpirun_dir_is_file 60 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/mpirun.yaml" \
    --set "output.dir=$WORK/plain_file"
  expect_failure
  expect_message "rank 0 .*error: output directory $WORK/plain_file cannot be created"
  expect_no_message "^epoch "
  # Measured 1.8-3.0 s (tests/README.md, "Thresholds"); bound 30 s.
  expect_faster_than 30
  pass
}
check mpirun_dir_is_file
finish "output errors"
