#!/usr/bin/env bash
# The progress line on real Fashion-MNIST: plain "progress:" lines and no carriage return when output goes to a
# file, alone and under mpirun (whose ranks write to pseudo-terminals of Open MPI's whatever mpirun's own output
# is); one line rewritten in place on a pseudo-terminal (progress_check.py runs the command on one), erased
# before every epoch, rank and checkpoint line; nothing with output.progress_every_s 0.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}" "${FUSETRAIN_PYTHON:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
FT=$FUSETRAIN_BIN/fusetrain
check="$FUSETRAIN_PYTHON $(dirname "$0")/progress_check.py"
work=$FUSETRAIN_TMP/progress
rm -rf "$work" && mkdir -p "$work"

# 2000 train images at batch 32: 62 steps per epoch alone, 31 on 2 ranks; seconds per epoch on one thread.
"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 2 --limit 2000 > /dev/null
cat > "$work/run.yaml" <<YAML
model: {name: simple_cnn}
data: {path: $work/data, batch_size: 32, limit_test: 200}
train: {epochs: 2, threads: 1, device: cpu}
distributed: {backend: gloo, stall_timeout_s: 30}
output: {dir: $work/runs, progress_every_s: 0.1, tensorboard: false, save_model: false}
YAML
train=("$FT" train --config "$work/run.yaml")
# shellcheck disable=SC2206
mpirun=($FUSETRAIN_MPIRUN -np 2)

"${train[@]}" --set output.name=file1 > "$work/file1.log"
$check plain "$work/file1.log"
"${mpirun[@]}" "${train[@]}" --set output.name=file2 > "$work/file2.log"
$check plain "$work/file2.log"
grep -q "^Rank 1, Epoch \[2/2\], " "$work/file2.log"

$check run "$work/tty1.out" "${train[@]}" --set output.name=tty1
$check terminal "$work/tty1.out"
# Checkpoints on rank 0's clock print mid-epoch: the line is erased before them too.
$check run "$work/tty2.out" "${mpirun[@]}" "${train[@]}" --set output.name=tty2 --set train.checkpoint_every_s=0.5
$check terminal "$work/tty2.out"
grep -q "checkpoint after" "$work/tty2.out"

$check run "$work/off.out" "${train[@]}" --set output.name=off --set output.progress_every_s=0
$check none "$work/off.out"
"${mpirun[@]}" "${train[@]}" --set output.name=off2 --set output.progress_every_s=0 > "$work/off2.log"
$check none "$work/off2.log"
echo "PASS"
