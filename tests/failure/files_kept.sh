#!/usr/bin/env bash
# Nothing a user made is lost or silently replaced: every command that writes refuses an existing file it was
# not allowed to replace (byte-identical afterwards), never writes onto its own input, numbers a rerun's name,
# refuses damaged model files, resumes a moved run folder, and reports a resumed run as the whole run it is.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data"
runs=$WORK/runs
write_config "$WORK/run.yaml" "$WORK/data" "train: {epochs: 1, threads: 1, seed: 7, device: cpu}" \
  "output: {dir: $runs, name: kept}"

# The sha256 of every file under the run folder and the data, to compare before and after a refused command.
hashes() { find "$runs" "$WORK/data" -type f -print0 | sort -z | xargs -0 sha256sum; }
expect_unchanged() {
  diff <(cat "$WORK/hashes.before") <(hashes) > "$WORK/hashes.diff" || { OUT=$WORK/hashes.diff; ft_fail "files changed"; }
}
remember() { hashes > "$WORK/hashes.before"; }

first_run() {
  run_case first_run 120 "$FT" train --config "$WORK/run.yaml"
  expect_status 0
  expect_message "^results: $runs/kept\.h5$"
  expect_message "^model: $runs/kept\.model$"
  pass
}
check first_run
model=$runs/kept.model
results=$runs/kept.h5

# refused NAME REGEX COMMAND...: COMMAND must fail naming REGEX and leave every file as it was.
refused() {
  local name=$1 expected=$2
  shift 2
  remember
  run_case "$name" 60 "$@"
  expect_failure
  expect_message "error: .*$expected"
  expect_unchanged
  expect_no_partial "$runs"
  pass
}

# 1. Existing outputs are kept unless --force: evaluate, predict and export alike.
check refused evaluate_onto_results "--out $results exists and is kept: choose another path or use --force to replace it" \
  "$FT" evaluate --checkpoint "$model" --out "$results" --device cpu
check refused predict_onto_results "--out $results exists and is kept: choose another path or use --force" \
  "$FT" predict --checkpoint "$model" --out "$results" "$WORK/data/test-00000-of-00003.h5"
check refused export_onto_results "--out $results exists and is kept" \
  "$FT" export --checkpoint "$model" --format torch --out "$results"

# 2. An output that is the command's own input is refused even with --force, however it is spelled.
check refused export_onto_itself "--out $model is the file this command reads \(--checkpoint $model\)" \
  "$FT" export --force --checkpoint "$model" --format safetensors --out "$model"
check refused export_onto_itself_spelled "--out $runs/\./kept\.model is the file this command reads" \
  "$FT" export --force --checkpoint "$model" --format torch --out "$runs/./kept.model"
check refused evaluate_onto_itself "--out $model is the file this command reads" \
  "$FT" evaluate --force --checkpoint "$model" --out "$model" --device cpu
check refused predict_onto_input "--out $WORK/data/test-00000-of-00003\.h5 is the file this command reads" \
  "$FT" predict --force --checkpoint "$model" --out "$WORK/data/test-00000-of-00003.h5" "$WORK/data/test-00000-of-00003.h5"

# --force replaces a file the user named, and evaluate's default name is numbered rather than replaced.
forced_and_numbered() {
  CASE=forced_and_numbered
  OUT=$WORK/forced.log
  echo "an old file" > "$WORK/old.pt"
  "$FT" export --force --checkpoint "$model" --format torch --out "$WORK/old.pt" > "$OUT" 2>&1 || ft_fail "export --force failed"
  [ "$(head -c 11 "$WORK/old.pt")" != "an old file" ] || ft_fail "--force did not replace $WORK/old.pt"
  "$FT" evaluate --checkpoint "$model" --device cpu > "$OUT" 2>&1 || ft_fail "evaluate failed"
  grep -q "^evaluation: $runs/kept-eval-test\.h5$" "$OUT" || ft_fail "first evaluation not at its default name"
  remember
  "$FT" evaluate --checkpoint "$model" --device cpu > "$OUT" 2>&1 || ft_fail "second evaluate failed"
  expect_message "^note: $runs/kept-eval-test\.h5 holds an earlier evaluation \(kept\): this one is written to $runs/kept-eval-test-2\.h5$"
  expect_message "^evaluation: $runs/kept-eval-test-2\.h5$"
  rm "$runs/kept-eval-test-2.h5"
  expect_unchanged
  # export makes the folders of --out, as evaluate and train do.
  "$FT" export --checkpoint "$model" --format safetensors --out "$WORK/new/folder/m.safetensors" > "$OUT" 2>&1 ||
    ft_fail "export into a missing folder failed"
  [ -s "$WORK/new/folder/m.safetensors" ] || ft_fail "no $WORK/new/folder/m.safetensors"
  echo "PASS [$CASE] --force replaces, default names are numbered, export makes its folder"
}
check forced_and_numbered

# 3. The same config again (here with another learning rate) keeps the earlier run and takes a numbered name;
# output.overwrite: true replaces it.
rerun_named() {
  remember
  run_case rerun_named 120 "$FT" train --config "$WORK/run.yaml" --set optimizer.lr=0.02
  expect_status 0
  expect_message "^note: 'kept' is the name of an earlier run in $runs \(its files are kept\): this run is named 'kept-2' and writes $runs/kept-2\.h5 \(output\.overwrite: true would replace"
  expect_message "^results: $runs/kept-2\.h5$"
  expect_message "^model: $runs/kept-2\.model$"
  rm -r "$runs/kept-2.h5" "$runs/kept-2.model" "$runs/kept-2.tb"
  expect_unchanged
  pass
  cp "$results" "$WORK/kept.h5.before"
  run_case rerun_overwrite 120 "$FT" train --config "$WORK/run.yaml" --set optimizer.lr=0.02 --set output.overwrite=true
  expect_status 0
  expect_message "^results: $results$"
  expect_no_message "^note: 'kept'"
  ! cmp -s "$results" "$WORK/kept.h5.before" || ft_fail "output.overwrite: true left $results as it was"
  pass
}
check rerun_named

# 4. A damaged model file or checkpoint is refused by every reader, naming the file.
damaged_model() {
  cp "$model" "$WORK/bad.model"
  flip_byte "$WORK/bad.model"
  local command
  for command in evaluate export predict; do
    case $command in
      evaluate) run_case "damaged_$command" 60 "$FT" evaluate --checkpoint "$WORK/bad.model" --device cpu --out "$WORK/e.h5" ;;
      export) run_case "damaged_$command" 60 "$FT" export --checkpoint "$WORK/bad.model" --format torch --out "$WORK/e.pt" ;;
      predict) run_case "damaged_$command" 60 "$FT" predict --checkpoint "$WORK/bad.model" "$WORK/data/test-00000-of-00003.h5" ;;
    esac
    expect_failure
    expect_message "error: $WORK/bad\.model is damaged \(checksum mismatch\): it is refused rather than read with wrong numbers"
    expect_absent "$WORK/e.h5"
    expect_absent "$WORK/e.pt"
    pass
  done
  echo "not a model" > "$WORK/text.model"
  run_case not_a_model 60 "$FT" evaluate --checkpoint "$WORK/text.model" --device cpu
  expect_failure
  expect_message "error: $WORK/text\.model is not a fusetrain model file or checkpoint \(not a LibTorch archive\)"
  expect_no_message "miniz"
  pass
  head -c 20000 "$model" > "$WORK/cut.model"
  run_case truncated_model 60 "$FT" export --checkpoint "$WORK/cut.model" --format torch --out "$WORK/e.pt"
  expect_failure
  expect_message "error: $WORK/cut\.model is damaged \(no checksum: the file is truncated"
  expect_no_message "miniz"
  pass
}
check damaged_model

# stop NAME CONFIG STEP [mpirun args...]: trains until optimizer step STEP, then stops as on a signal (status
# 75, a checkpoint) through the test aid FUSETRAIN_TEST_STOP_AT_STEP.
stop() {
  local name=$1 config=$2 step=$3
  shift 3
  run_case "$name" 120 env FUSETRAIN_TEST_STOP_AT_STEP="$step" "$@" "$FT" train --config "$config"
  expect_status 75
  expect_message "^stopped by signal at epoch 1, step $step; checkpoint "
  pass
}

# A checkpoint is read by evaluate only once it verifies, like a model file.
damaged_checkpoint() {
  write_config "$WORK/ckpt.yaml" "$WORK/data" "output: {dir: $WORK/ckpt_runs, name: ck}"
  stop ckpt_stop "$WORK/ckpt.yaml" 3
  flip_byte "$WORK/ckpt_runs/ck.ckpt"
  run_case damaged_checkpoint 60 "$FT" evaluate --checkpoint "$WORK/ckpt_runs/ck.ckpt" --device cpu
  expect_failure
  expect_message "error: $WORK/ckpt_runs/ck\.ckpt is damaged \(checksum mismatch\)"
  pass
}
check damaged_checkpoint

# 6. A run folder moved to another path resumes there, with a note; named and unnamed runs alike.
moved_folder() {
  local name=$1 output
  output="output: {dir: $WORK/old_place/$name, name: $name}"
  [ "$name" != unnamed ] || output="output: {dir: $WORK/old_place/$name}"
  write_config "$WORK/$name.yaml" "$WORK/data" "$output"
  stop "${name}_stop" "$WORK/$name.yaml" 5
  mkdir -p "$WORK/new_place"
  mv "$WORK/old_place/$name" "$WORK/new_place/$name"
  run_case "${name}_moved" 120 "$FT" train --config "$WORK/$name.yaml" --set "output.dir=$WORK/new_place/$name"
  expect_status 0
  expect_message "^note: checkpoint $WORK/new_place/$name/[^ ]+\.ckpt was written in $WORK/old_place/$name; the run folder has moved to $WORK/new_place/$name and the run continues there$"
  expect_message "^resuming from $WORK/new_place/$name/[^ ]+\.ckpt at epoch 1, step 5$"
  expect_message "^results: $WORK/new_place/$name/"
  pass
}
check moved_folder moved
check moved_folder unnamed

# A checkpoint of another config under mpirun: one message, from rank 0, and the checkpoint stays.
other_config_once() {
  write_config "$WORK/two.yaml" "$WORK/data" "output: {dir: $WORK/two_runs, name: two}"
  # shellcheck disable=SC2086
  stop two_stop "$WORK/two.yaml" 4 $FUSETRAIN_MPIRUN -np 2
  remember_dir=$(sha256sum "$WORK/two_runs/two.ckpt")
  # shellcheck disable=SC2086
  run_case two_other_config 60 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/two.yaml" --set optimizer.lr=0.3
  expect_failure
  expect_message "error: checkpoint $WORK/two_runs/two\.ckpt was written by a run with a different config: optimizer\.lr"
  expect_count 1 "error:"
  expect_no_message "^epoch "
  [ "$(sha256sum "$WORK/two_runs/two.ckpt")" = "$remember_dir" ] || ft_fail "the checkpoint changed"
  pass
}
check other_config_once

# 7. A run resumed on another number of ranks is reported as the whole run: each segment's batch, the
# wall time of every segment, and what the last segment trained.
resumed_report() {
  write_config "$WORK/grow.yaml" "$WORK/data" "train: {epochs: 2, threads: 1, seed: 7, device: cpu}" \
    "output: {dir: $WORK/grow_runs, name: grow}"
  stop grow_stop "$WORK/grow.yaml" 5
  # shellcheck disable=SC2086
  run_case grow_resume 120 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/grow.yaml"
  expect_status 0
  expect_message "^done: 2 epochs in [0-9.]+ s over 2 segments; this one trained from epoch 1 \(step 5\) in [0-9.]+ s \(training [0-9.]+ s\)"
  local report=$WORK/grow_report.csv
  "$FT" report --csv "$WORK/grow_runs/grow.h5" > "$report" || ft_fail "report failed"
  OUT=$report
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
           NR == 2 { exit !($col["batch"] == "32 -> 16 (global 32)" && $col["epochs"] == 2 && $col["wall_s"] + 0.15 >= $col["train_s"]) }' \
    "$report" || ft_fail "the report does not show both segments' batch and the whole run's time"
  # The segments' wall times add up to the summary's.
  local sum total
  sum=$("$FT" inspect "$WORK/grow_runs/grow.h5" /segments/wall_time_s | awk '{ s += $1 } END { printf "%.6f", s }')
  total=$("$FT" inspect "$WORK/grow_runs/grow.h5" /summary/wall_time_s)
  awk -v a="$sum" -v b="$total" 'BEGIN { exit !(a - b < 1e-3 && b - a < 1e-3) }' || ft_fail "segments sum to $sum s, summary says $total s"
  pass
}
check resumed_report

# 9. fusetrain-prep keeps an existing shard set unless --force; inspect shows a group; report refuses names
# it does not know.
smaller() {
  refused prep_existing "--output $WORK/data already holds a shard set \(6 files: test-00000-of-00003\.h5, \.\.\.\): they are kept\. Choose another folder, or pass --force" \
    "$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$FASHION_MNIST" --output "$WORK/data" --shards 1 --limit 100
  run_case inspect_group 30 "$FT" inspect "$results" /epochs
  expect_status 0
  expect_message "^/epochs/$"
  expect_message "^/epochs/train_loss \[1\]$"
  pass
  local option
  for option in --sort --group --key; do
    run_case "report_unknown${option#--}" 30 "$FT" report "$option" nosuch_column "$results"
    expect_failure
    expect_message "error: $option 'nosuch_column' is neither a column of the report nor a config key"
    pass
  done
  cp -r "$WORK/data" "$WORK/data_copy"
  run_case prep_force 60 "$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$FASHION_MNIST" --output "$WORK/data_copy" \
    --shards 1 --limit 100 --force
  expect_status 0
  [ "$(find "$WORK/data_copy" -name '*.h5' | wc -l)" -eq 2 ] || ft_fail "--force did not replace the shard set"
  pass
}
check smaller

# The fallback from a damaged newest checkpoint promises the move aside only once the older one has loaded:
# a resume refused after the choice leaves the damaged file where it was.
fallback_refused() {
  write_config "$WORK/fall.yaml" "$WORK/data" "data: {path: $WORK/data, batch_size: 64}" \
    "train: {epochs: 4, threads: 1, seed: 7, device: cpu, checkpoint_every: 1, keep_checkpoints: 2}" \
    "output: {dir: $WORK/fall_runs, name: fall}"
  run_case fall_stop 120 env FUSETRAIN_TEST_STOP_AT_STEP=25 "$FT" train --config "$WORK/fall.yaml"
  expect_status 75
  flip_byte "$WORK/fall_runs/fall.ckpt"
  run_case fall_refused 60 "$FT" train --config "$WORK/fall.yaml" --set optimizer.lr=0.3
  expect_failure
  expect_message "^warning: checkpoint $WORK/fall_runs/fall\.ckpt is damaged \(checksum mismatch\): resuming from the previous one $WORK/fall_runs/fall\.ckpt\.1 \(once it has loaded, the damaged file is moved aside"
  expect_message "error: checkpoint $WORK/fall_runs/fall\.ckpt\.1 was written by a run with a different config"
  if [ ! -f "$WORK/fall_runs/fall.ckpt" ] || [ -e "$WORK/fall_runs/fall.ckpt.damaged" ]; then
    ft_fail "the damaged checkpoint was moved although the resume was refused: $(ls "$WORK/fall_runs")"
  fi
  pass
}
check fallback_refused
finish "files kept"
