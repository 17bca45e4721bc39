#!/usr/bin/env bash
# Every file policy on every input of every command: an output aimed at a file the command reads (config,
# checkpoint, model, data, images, results, sweep file, runner, raw data) is refused, naming it, even with --force.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
# Refused before any work, with every file byte-identical afterwards. Where a command's outputs cannot be
# named onto its inputs (report's event files, prep's shards beside raw files), the inputs must stay as they were.
prep_data "$WORK/data" 300
runs=$WORK/runs
write_config "$WORK/run.yaml" "$WORK/data" "train: {epochs: 1, threads: 1, seed: 7, device: cpu}" \
  "output: {dir: $runs, name: base}"

# Every file under $WORK but the cases' logs, with its sha256, to compare before and after a command.
hashes() { find "$WORK" -type f ! -name '*.log' ! -name 'hashes.*' ! -name 'inputs.*' -print0 | sort -z | xargs -0 sha256sum; }
remember() { hashes > "$WORK/hashes.before"; }
expect_unchanged() {
  diff <(cat "$WORK/hashes.before") <(hashes) > "$WORK/hashes.diff" || { OUT=$WORK/hashes.diff; ft_fail "files changed"; }
}

# onto_input NAME INPUT_NAMED_BY INPUT COMMAND...: COMMAND aims an output at INPUT (with replacing allowed) and
# must be refused, naming INPUT as the file it reads, leaving every file as it was.
onto_input() {
  local name=$1 named_by=$2 input=$3
  shift 3
  remember
  run_case "$name" 120 "$@"
  expect_failure
  expect_message "error: .* is the file this command reads \($named_by $input\)"
  expect_no_message "^epoch "
  expect_unchanged
  expect_no_partial "$WORK"
  pass
}

# keeps_inputs NAME COMMAND...: COMMAND succeeds, and the files listed in $WORK/inputs.list are as they were.
keeps_inputs() {
  local name=$1
  shift
  xargs -d '\n' sha256sum < "$WORK/inputs.list" > "$WORK/inputs.before"
  run_case "$name" 120 "$@"
  expect_status 0
  xargs -d '\n' sha256sum < "$WORK/inputs.list" | diff "$WORK/inputs.before" - > "$WORK/inputs.diff" ||
    { OUT=$WORK/inputs.diff; ft_fail "an input changed"; }
  pass
}

setup() {
  run_case base_run 180 "$FT" train --config "$WORK/run.yaml"
  expect_status 0
  run_case checkpoint_run 180 env FUSETRAIN_TEST_STOP_AT_STEP=2 "$FT" train --config "$WORK/run.yaml" \
    --set output.name=ck
  expect_status 75
  # Images for predict: two 1x1 gray PNG files in a folder (predict resizes them to the network's input).
  mkdir -p "$WORK/images"
  local png=iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==
  echo "$png" | base64 -d > "$WORK/images/a.png"
  echo "$png" | base64 -d > "$WORK/images/b.png"
  run_case predict_images 60 "$FT" predict --checkpoint "$model" "$WORK/images"
  expect_status 0
  expect_message "a\.png"
}
model=$runs/base.model
setup
checkpoint=$runs/ck.ckpt
shard=$WORK/data/train-00000-of-00003.h5
test_shard=$WORK/data/test-00001-of-00003.h5

# train: its results file, timeline and model file against its config and its data shards.
check onto_input train_results_onto_shard "data\.path" "$shard" \
  "$FT" train --config "$WORK/run.yaml" --set "output.dir=$WORK/data" --set output.name=train-00000-of-00003 \
  --set output.overwrite=true
check onto_input train_results_onto_test_shard "data\.path" "$WORK/data/test-00000-of-00003.h5" \
  "$FT" train --config "$WORK/run.yaml" --set "output.dir=$WORK/data" --set output.name=test-00000-of-00003 \
  --set output.overwrite=true
check onto_input train_timeline_onto_config "--config" "$WORK/run.yaml" \
  "$FT" train --config "$WORK/run.yaml" --set "distributed.timeline=$WORK/run.yaml" --set output.overwrite=true
check onto_input train_timeline_onto_shard "data\.path" "$shard" \
  "$FT" train --config "$WORK/run.yaml" --set "distributed.timeline=$shard" --set output.overwrite=true
check onto_input train_results_onto_config "--config" "$WORK/cfg/base.h5" \
  bash -c "mkdir -p '$WORK/cfg' && cp '$WORK/run.yaml' '$WORK/cfg/base.h5' && \
    '$FT' train --config '$WORK/cfg/base.h5' --set 'output.dir=$WORK/cfg' --set output.overwrite=true; s=\$?; \
    cmp -s '$WORK/run.yaml' '$WORK/cfg/base.h5' && rm -r '$WORK/cfg'; exit \$s"

# evaluate: --out against the model or checkpoint, the config and the data shards (given or the run's own).
check onto_input evaluate_onto_config "--config" "$WORK/run.yaml" \
  "$FT" evaluate --force --checkpoint "$model" --config "$WORK/run.yaml" --out "$WORK/run.yaml" --device cpu
check onto_input evaluate_onto_given_shard "--data" "$test_shard" \
  "$FT" evaluate --force --checkpoint "$model" --data "$WORK/data" --out "$test_shard" --device cpu
check onto_input evaluate_onto_runs_shard "data\.path" "$test_shard" \
  "$FT" evaluate --force --checkpoint "$model" --out "$test_shard" --device cpu
check onto_input evaluate_checkpoint_onto_itself "--checkpoint" "$checkpoint" \
  "$FT" evaluate --force --checkpoint "$checkpoint" --out "$checkpoint" --device cpu

# export: --out against the checkpoint and the data shards describing it.
check onto_input export_onto_given_shard "--data" "$shard" \
  "$FT" export --force --checkpoint "$checkpoint" --data "$WORK/data" --format torch --out "$shard"
check onto_input export_onto_runs_shard "data\.path" "$shard" \
  "$FT" export --force --checkpoint "$checkpoint" --format torch --out "$shard"
check onto_input export_checkpoint_onto_itself "--checkpoint" "$checkpoint" \
  "$FT" export --force --checkpoint "$checkpoint" --format safetensors --out "$checkpoint"

# predict: --out against the model, the data shards describing a checkpoint, an input file and a file of an
# input folder.
check onto_input predict_onto_model "--checkpoint" "$model" \
  "$FT" predict --force --checkpoint "$model" --out "$model" "$WORK/images/a.png"
check onto_input predict_onto_given_shard "--data" "$shard" \
  "$FT" predict --force --checkpoint "$checkpoint" --data "$WORK/data" --out "$shard" "$WORK/images/a.png"
check onto_input predict_onto_file_of_input_folder "an input" "$WORK/images/b\.png" \
  "$FT" predict --force --checkpoint "$model" --out "$WORK/images/b.png" "$WORK/images"

# sweep: its outputs (config.yaml, manifest.yaml, points.tsv, sweep.sbatch, run.sh in --out) against the sweep
# file and the runner it fills in.
sweep_inputs() {
  mkdir -p "$WORK/sweep"
  { grep -v '^output:' "$WORK/run.yaml"; echo "sweep: {grid: {optimizer.lr: [0.01, 0.02]}}"; } > "$WORK/sweep/config.yaml"
  cp "$(dirname "$0")/../../jobs/slurm/sweep.sbatch" "$WORK/sweep/sweep.sbatch"
}
sweep_inputs
check onto_input sweep_onto_its_file "the sweep file" "$WORK/sweep/config\.yaml" \
  "$FT" sweep "$WORK/sweep/config.yaml" --out "$WORK/sweep"
cp "$WORK/sweep/config.yaml" "$WORK/sweep-elsewhere.yaml"  # so that only the runner lies in --out
check onto_input sweep_onto_its_runner "--runner" "$WORK/sweep/sweep\.sbatch" \
  "$FT" sweep "$WORK/sweep-elsewhere.yaml" --out "$WORK/sweep" --runner "$WORK/sweep/sweep.sbatch"

# report --tensorboard: event files are named by TensorBoard's scheme, so no input can be one; the results file
# read stays as it is even when it lies in the run's event folder and --force replaces the events there.
report_inputs() {
  mkdir -p "$WORK/tb/base"
  cp "$runs/base.h5" "$WORK/tb/base/base.h5"
  printf '%s\n' "$WORK/tb/base/base.h5" > "$WORK/inputs.list"
  keeps_inputs report_events "$FT" report --tensorboard "$WORK/tb" "$WORK/tb/base/base.h5"
  keeps_inputs report_events_forced "$FT" report --tensorboard "$WORK/tb" --force "$WORK/tb/base/base.h5"
  [ "$(find "$WORK/tb/base" -name 'events.out.tfevents.*' | wc -l)" -eq 1 ] || ft_fail "not one event file"
}
check report_inputs

# fusetrain-prep: shards written into the folder of the raw files, even with --force, leave the raw files be.
prep_inputs() {
  mkdir -p "$WORK/raw"
  cp "$FASHION_MNIST"/*-ubyte.gz "$WORK/raw/"
  find "$WORK/raw" -type f > "$WORK/inputs.list"
  keeps_inputs prep_into_raw "$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$WORK/raw" --output "$WORK/raw" \
    --shards 1 --limit 100 --force
  [ -f "$WORK/raw/train-00000-of-00001.h5" ] || ft_fail "no shards written beside the raw files"
}
check prep_inputs
finish "inputs are never outputs"
