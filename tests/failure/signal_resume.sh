#!/usr/bin/env bash
# SIGTERM/SIGINT must checkpoint and exit with status 75, and the same command run again must print
# "resuming from ... at epoch E, step S" at the position where it stopped and finish with a complete results file.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data"
# The signalled run is configured for so many epochs that no host finishes them before the signal lands
# (which a 6-epoch run on a fast host could); the resumed run is told to end one epoch after the stop.
epochs=1000

# stop_and_resume NAME SIGNAL TARGET RESUMABLE_STATUS COMMAND...: runs COMMAND, sends SIGNAL to TARGET (ranks |
# launcher) once epoch 1 is printed, checks the stop, then runs COMMAND again and checks that it resumes.
stop_and_resume() {
  local name=$1 signal=$2 target=$3 stop_status=$4
  shift 4
  local config=$WORK/$name.yaml checkpoint results output="output: {dir: $WORK/runs/$name, name: $name}"
  # Without output.name the run is named after its start time; the same command must still resume.
  [ "${name%_unnamed}" = "$name" ] || output="output: {dir: $WORK/runs/$name}"
  write_config "$config" "$WORK/data" "data: {path: $WORK/data, batch_size: 16}" \
    "train: {epochs: $epochs, threads: 1, seed: 7, device: cpu}" "$output"
  launch "$name" "$@" train --config "$config"
  wait_for_line "$OUT" "^epoch   1/$epochs" 120 "$JOB"
  local sent pid
  sent=$(now)
  if [ "$target" = launcher ]; then
    kill -s "$signal" "$JOB"
  else
    for rank in 0 1; do
      pid=$(rank_pid "train --config $config" "$rank") || ft_fail "rank $rank not found"
      kill -s "$signal" "$pid"
    done
  fi
  wait_job 60
  ELAPSED=$(seconds_since "$sent")
  expect_status "$stop_status"
  # From the signal to the exit: measured 0.3-1.5 s over the default, AVX2 and AVX512 ISAs and a busy core
  # (tests/README.md, "Thresholds"); bound 30 s.
  expect_faster_than 30
  expect_message "^stopped by signal at epoch [0-9]+, step [0-9]+; checkpoint $WORK/runs/$name/[^ ]+\.ckpt$"
  checkpoint=$(sed -n 's/^stopped by signal at .*; checkpoint //p' "$OUT")
  results=${checkpoint%.ckpt}.h5
  [ -f "$checkpoint" ] || ft_fail "no checkpoint $checkpoint"
  expect_absent "$results"
  expect_no_partial "$WORK/runs"
  pass
  local position last
  position=$(sed -n 's/^stopped by signal at \(epoch [0-9]*, step [0-9]*\);.*/\1/p' "$OUT")
  last=$(($(sed -n 's/^epoch \([0-9]*\), .*/\1/p' <<< "$position") + 1))

  # The same command again, with train.epochs (which may change on resume) cut to one epoch past the stop.
  write_config "$config" "$WORK/data" "data: {path: $WORK/data, batch_size: 16}" \
    "train: {epochs: $last, threads: 1, seed: 7, device: cpu}" "$output"
  run_case "${name}_resume" 180 "$@" train --config "$config"
  expect_status 0
  expect_message "^resuming from $checkpoint at $position\$"
  expect_message "^epoch +$last/$last "
  expect_message "^results: $WORK/runs/$name/"
  results=$(sed -n 's/^results: //p' "$OUT")
  expect_absent "$checkpoint"
  [ "$(find "$WORK/runs/$name" -name '*.ckpt' | wc -l)" -eq 0 ] || ft_fail "checkpoints left: $(ls "$WORK/runs/$name")"
  expect_no_partial "$WORK/runs"
  "$FT" report "$results" > /dev/null || ft_fail "fusetrain report cannot read $results"
  local numbers
  numbers=$("$FT" inspect "$results" /epochs/epoch | paste -sd, -)
  [ "$numbers" = "$(seq -s, 1 "$last")" ] || ft_fail "$results holds epochs $numbers, not 1..$last"
  pass
}

# SLURM-style pre-emption: every rank receives SIGTERM; mpirun passes the ranks' status 75 on.
# shellcheck disable=SC2086
check stop_and_resume sigterm_ranks TERM ranks 75 $FUSETRAIN_MPIRUN -np 2 "$FT"
# Ctrl-C on a single-process run.
check stop_and_resume sigint_single INT launcher 75 "$FT"
# A checkpoint that does not fit: another config, or a damaged file. Both are reported before any epoch
# and the checkpoint is kept.
checkpoint_errors() {
  local config=$WORK/ckpt_errors.yaml checkpoint=$WORK/runs/ckpt_errors/case.ckpt
  write_config "$config" "$WORK/data" "data: {path: $WORK/data, batch_size: 16}" \
    "train: {epochs: $epochs, threads: 1, seed: 7, device: cpu}" "output: {dir: $WORK/runs/ckpt_errors, name: case}"
  launch ckpt_errors_stop "$FT" train --config "$config"
  wait_for_line "$OUT" "^epoch   1/$epochs" 120 "$JOB"
  kill -TERM "$JOB"
  wait_job 60
  expect_status 75

  run_case ckpt_other_config 60 "$FT" train --config "$config" --set optimizer.lr=0.02
  expect_failure
  expect_message "error: checkpoint $checkpoint was written by a run with a different config: optimizer\.lr: 0\.01 in the checkpoint, 0\.02 now\. Only train\.epochs, the number of ranks .* and where the run computes .* may change on resume\. To continue that run, give these keys the checkpoint's values; to start a separate run, choose another output\.name \(the checkpoint is kept\)"
  expect_no_message "^epoch "
  [ -f "$checkpoint" ] || ft_fail "the checkpoint was removed"
  pass

  truncate -s 50000 "$checkpoint"
  run_case ckpt_truncated 60 "$FT" train --config "$config"
  expect_failure
  expect_message "error: no checkpoint of this run can be used, every one is damaged: $checkpoint \(no checksum: the file is truncated"
  expect_no_message "^epoch "
  pass
}
check checkpoint_errors
# SIGTERM to a run without output.name.
check stop_and_resume sigterm_unnamed TERM launcher 75 "$FT"
finish "signals and resume"
