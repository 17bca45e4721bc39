#!/usr/bin/env bash
# distributed.reproducible: the same run on 1, 2 and 4 ranks (4 micro-batches a step) ends with the same
# weights and optimizer state, bit for bit (their SHA-256 digests per epoch), and the same per-epoch loss
# and accuracy, in fp32 and in bf16 autocast; a run stopped on 2 ranks and resumed on 4 or on 1 is the
# uninterrupted run; and without the mode 1 and 2 ranks differ (so the comparison can fail). The network
# has BatchNorm and dropout, the data flips and crops.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/../../failure/lib.sh"
if [ ! -f "$FASHION_MNIST/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: dataset-fashion-mnist not installed ($FASHION_MNIST)"
  exit 77
fi
"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$FASHION_MNIST" --output "$WORK/data" --shards 2 --limit 800 > /dev/null
cat > "$WORK/run.yaml" <<YAML
model:
  name: conv_stack
  layers:
    - {type: conv, out: 8, kernel: 3}
    - bn
    - relu
    - {type: maxpool, kernel: 2, stride: 2}
    - {type: dropout, p: 0.25}
    - {type: linear, out: 0}
data: {path: $WORK/data, batch_size: 16, shuffle: global, augment: {flip: true, crop_padding: 2}}
optimizer: {name: sgd, lr: 0.01, momentum: 0.9}
train: {epochs: 2, threads: 1, seed: 3, device: cpu}
distributed: {backend: mpi, reproducible: true, micro_batches: 4, stall_timeout_s: 60}
output: {dir: $WORK/runs}
YAML

# train NAME RANKS [--set ...]: one run; 800 images at 4 x 16 a step are 12 steps an epoch.
train() {
  local name=$1 ranks=$2
  shift 2
  # shellcheck disable=SC2086
  run_case "$name" 300 $FUSETRAIN_MPIRUN -np "$ranks" "$FT" train --config "$WORK/run.yaml" --set "output.name=$name" "$@"
}

# The per-epoch record of a run, every value at full precision.
record() {
  local column
  for column in weights_digest optimizer_digest train_loss train_acc test_loss test_acc; do
    echo "/epochs/$column"
    "$FT" inspect "$WORK/runs/$1.h5" "/epochs/$column"
  done
}

# same NAME REFERENCE: NAME's record is REFERENCE's, bit for bit.
same() {
  CASE="same_$1"
  diff <(record "$2") <(record "$1") > "$WORK/$1.diff" || { OUT=$WORK/$1.diff; ft_fail "$1 differs from $2"; }
  echo "PASS [$CASE] $1 equals $2: $(record "$1" | sed -n 2p | cut -c1-16)"
}

ranks_agree() {
  local precision=$1 ranks
  for ranks in 1 2 4; do
    train "${precision}_$ranks" "$ranks" --set "precision.dtype=$precision"
    expect_status 0
    pass
  done
  same "${precision}_2" "${precision}_1"
  same "${precision}_4" "${precision}_1"
}
check ranks_agree fp32
check ranks_agree bf16

# Stopped on 2 ranks after step 7 (epoch 1), resumed on RANKS: the uninterrupted run's record.
resumed_on() {
  local name=resumed_on_$1
  # shellcheck disable=SC2086
  run_case "${name}_stop" 300 env FUSETRAIN_TEST_STOP_AT_STEP=7 $FUSETRAIN_MPIRUN -np 2 "$FT" train \
    --config "$WORK/run.yaml" --set "output.name=$name"
  expect_status 75
  pass
  train "$name" "$1"
  expect_status 0
  expect_message "^resuming from $WORK/runs/$name\.ckpt at epoch 1, step 7$"
  pass
  same "$name" fp32_1
}
check resumed_on 4
check resumed_on 1

# Without the mode, 1 and 2 ranks sum in other orders and draw other dropout masks: the digests differ.
default_differs() {
  train default_1 1 --set distributed.reproducible=false --set train.accumulation_steps=4
  expect_status 0
  train default_2 2 --set distributed.reproducible=false --set train.accumulation_steps=2
  expect_status 0
  CASE=default_differs
  [ "$(record default_1 | sed -n 2p)" != "$(record default_2 | sed -n 2p)" ] ||
    ft_fail "the default mode gave the same weights on 1 and 2 ranks: the comparison above could not fail"
  echo "PASS [$CASE] without distributed.reproducible 1 and 2 ranks differ"
}
check default_differs
finish "the same bits on any number of ranks"
