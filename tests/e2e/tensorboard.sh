#!/usr/bin/env bash
# TensorBoard event files on real Fashion-MNIST, read back with TensorBoard's own reader (tensorboard_check.py):
# a 2-rank run's per-step and per-epoch tags, steps and values against what it printed and its results file; a
# sparser cadence against the per-step values; a run stopped as a signal would and resumed, and one that
# failed past its last checkpoint and was resumed, read as the straight run; report --tensorboard of a
# results file against the live event file, and its refusal to mix runs in one folder.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}" "${FUSETRAIN_PYTHON:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
"$FUSETRAIN_PYTHON" -c "import h5py, tensorboard" 2>/dev/null ||
  { echo "SKIP: $FUSETRAIN_PYTHON lacks h5py or tensorboard (tools/setup.sh installs them)"; exit 77; }
FT=$FUSETRAIN_BIN/fusetrain
check="$FUSETRAIN_PYTHON $(dirname "$0")/tensorboard_check.py"
work=$FUSETRAIN_TMP/tensorboard
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 600 train images on 2 ranks at batch 32: 9 optimizer steps per epoch, 27 in the run.
"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 2 --limit 600 > /dev/null
cat > "$work/run.yaml" <<YAML
model: {name: simple_cnn}
data: {path: $work/data, batch_size: 32}
optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
scheduler: {name: cosine}
train: {epochs: 3, threads: 1, device: cpu, seed: 5, checkpoint_every: 1}
distributed: {backend: gloo, stall_timeout_s: 30}
output: {dir: $work/runs, tensorboard_every: 1, progress_every_s: 0}
YAML
runs=$work/runs
# train NAME [--set ...]: the run on 2 ranks, its output in NAME.log (appended: a resumed run adds to it).
train() {
  local name=$1; shift
  # shellcheck disable=SC2086
  $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$work/run.yaml" --set "output.name=$name" "$@" >> "$work/$name.log" 2>&1
}
event_files() { find "$runs/$1.tb" -name 'events.out.tfevents.*' | sort; }

train straight
[ "$(event_files straight | wc -l)" -eq 1 ] || fail "straight.tb: $(event_files straight)"
event_files straight | grep -Eq "/events\.out\.tfevents\.[0-9]{10}\.[^/]+$" ||
  fail "event file name $(event_files straight)"
$check live "$runs/straight.tb" "$work/straight.log" "$runs/straight.h5" --ranks 2 --steps 9 --epochs 3 --every 1

train every4 --set output.tensorboard_every=4
$check window "$runs/every4.tb" "$runs/straight.tb" --steps 9 --every 4

# Stopped after step 13 (epoch 2, step 4) as SIGUSR1 would: exit 75, a checkpoint; the same command resumes and
# adds a second event file; TensorBoard reads the two as the straight run.
set +e
FUSETRAIN_TEST_STOP_AT_STEP=13 train resumed
status=$?
set -e
[ "$status" -eq 75 ] || { cat "$work/resumed.log"; fail "the stopped run exited $status, not 75"; }
[ "$(event_files resumed | wc -l)" -eq 1 ] || fail "resumed.tb after the stop: $(event_files resumed)"
train resumed
grep -q "^resuming from .*resumed.ckpt at epoch 2, step 4$" "$work/resumed.log" || fail "no resume in resumed.log"
[ "$(event_files resumed | wc -l)" -eq 2 ] || fail "resumed.tb after the resume: $(event_files resumed)"
$check live "$runs/resumed.tb" "$work/resumed.log" "$runs/resumed.h5" --ranks 2 --steps 9 --epochs 3 --every 1 \
  --resumed-at 13
$check same "$runs/resumed.tb" "$runs/straight.tb" --partial-epoch-end 18

# A failure past the last checkpoint: NaN weights after step 14 make step 15's loss non-finite and the run fails,
# its epoch-1 checkpoint (step 9) kept. The crashed segment's file keeps steps 10-15; the resumed segment starts
# a session at step 10, so TensorBoard drops them and reads the straight run again.
set +e
FUSETRAIN_TEST_NAN_AFTER_STEP=14 train crashed
status=$?
set -e
[ "$status" -ne 0 ] && [ "$status" -ne 75 ] || fail "the run with a planted NaN exited $status"
grep -q "non-finite training loss at optimizer step 14" "$work/crashed.log" || fail "no loss error in crashed.log"
$check orphans "$(event_files crashed | head -n 1)" 10 15
train crashed
$check same "$runs/crashed.tb" "$runs/straight.tb"

# report --tensorboard: one folder per run with the live run's per-epoch tags, steps and values; a folder that
# holds event files already is refused without --force and replaced with it.
"$FT" report --tensorboard "$work/report" "$runs/straight.h5" "$runs/every4.h5" > "$work/report.log"
grep -q "^tensorboard: $work/report/straight/events.out.tfevents." "$work/report.log" ||
  fail "$(cat "$work/report.log")"
$check report "$work/report/straight" "$runs/straight.tb"
$check report "$work/report/every4" "$runs/every4.tb"
if "$FT" report --tensorboard "$work/report" "$runs/straight.h5" 2> "$work/refused.err"; then
  fail "report --tensorboard wrote into a folder holding event files"
fi
grep -q "TensorBoard folder $work/report/straight already holds event files" "$work/refused.err" ||
  fail "refusal: $(cat "$work/refused.err")"
"$FT" report --tensorboard "$work/report" --force "$runs/straight.h5" > /dev/null
[ "$(find "$work/report/straight" -name 'events.out.tfevents.*' | wc -l)" -eq 1 ] ||
  fail "--force left $(ls "$work/report/straight")"
$check report "$work/report/straight" "$runs/straight.tb"
echo "PASS"
