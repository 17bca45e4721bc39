#!/usr/bin/env bash
# A full file system (a tiny tmpfs, so this needs root; skipped otherwise): full at start must stop before the
# first epoch; filling up while a checkpoint, the model or the results file is written must give a clear
# error, no crash, no success claimed and no broken or half-written file.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data"
mnt=$WORK/mnt
mkdir -p "$mnt"
if ! mount -t tmpfs -o size=256k fusetrain-full "$mnt" 2> /dev/null; then
  echo "SKIP: cannot mount a tmpfs here (needs root)"
  exit 77
fi
trap 'umount "$mnt" 2> /dev/null || umount -l "$mnt" 2> /dev/null || true' EXIT

# leave_free KB: fills the file system so that about KB kilobytes stay free, and empties the output folder.
leave_free() {
  rm -rf "${mnt:?}/out" "$mnt/fill"
  local avail
  avail=$(df --output=avail -k "$mnt" | tail -n 1 | tr -d ' ')
  if [ "$avail" -gt "$1" ]; then
    dd if=/dev/zero of="$mnt/fill" bs=1k count=$((avail - $1)) status=none 2> /dev/null || true
  fi
}

full_at_start() {
  leave_free 0
  write_config "$WORK/full.yaml" "$WORK/data"
  run_case full_at_start 60 "$FT" train --config "$WORK/full.yaml" --set "output.dir=$mnt/out"
  expect_failure
  expect_message "error: output directory $mnt/out cannot be written \(No space left on device\): is the file system full\?"
  expect_no_message "^epoch "
  # Measured 0.8-2.0 s over the default, AVX2 and AVX512 ISAs and a busy core (tests/README.md, "Thresholds");
  # bound 30 s.
  expect_faster_than 30
  [ -z "$(ls -A "$mnt/out" 2> /dev/null)" ] || ft_fail "files left in $mnt/out: $(ls -A "$mnt/out")"
  pass
}

# 16 KB free: the start-up probe passes, the first checkpoint (about 1.5 MB) cannot be written.
full_during_checkpoint() {
  leave_free 16
  write_config "$WORK/ckpt.yaml" "$WORK/data" "output: {dir: $mnt/out, name: case}"
  run_case full_during_checkpoint 90 "$FT" train --config "$WORK/ckpt.yaml" --set train.checkpoint_every=1 \
    --set train.epochs=3
  expect_failure
  expect_message "error: .*$mnt/out/case\.ckpt.*No space left on device"
  expect_no_message "^results: "
  expect_no_partial "$mnt/out"
  pass
}

# 16 KB free: training runs, the trained network's file (written first, about as large as a checkpoint)
# does not fit, so neither it nor the results file naming it appears.
full_during_model() {
  leave_free 16
  write_config "$WORK/model.yaml" "$WORK/data" "output: {dir: $mnt/out, name: case}"
  run_case full_during_model 90 "$FT" train --config "$WORK/model.yaml"
  expect_failure
  expect_message "error: .*$mnt/out/case\.model.*No space left on device"
  expect_no_message "^results: "
  expect_no_partial "$mnt/out"
  [ ! -e "$mnt/out/case.h5" ] || ft_fail "a results file naming a model that was not written was left behind"
  pass
}

# 12 KB free: training runs, the results file (about 22 KB) does not fit.
full_during_results() {
  leave_free 12
  write_config "$WORK/results.yaml" "$WORK/data" "output: {dir: $mnt/out, name: case, save_model: false}"
  run_case full_during_results 90 "$FT" train --config "$WORK/results.yaml"
  expect_failure
  expect_message "error: .*$mnt/out/case\.h5.*No space left on device"
  expect_no_message "^results: "
  expect_no_partial "$mnt/out"
  if [ -e "$mnt/out/case.h5" ]; then
    "$FT" report "$mnt/out/case.h5" > /dev/null 2>&1 || ft_fail "a broken $mnt/out/case.h5 was left behind"
  fi
  pass
}

check full_at_start
check full_during_checkpoint
check full_during_model
check full_during_results
finish "full output file system"
