#!/usr/bin/env bash
# CPU smoke test of tools/bench/fast_cifar_pytorch.py (the PyTorch baseline of the fast_cifar recipe): 2 epochs
# on 1200 Fashion-MNIST images (1x28x28) print the per-seed and summary lines, well above chance accuracy.
set -euo pipefail
: "${FUSETRAIN_BIN_DIR:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_PYTHON:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
"$FUSETRAIN_PYTHON" -c "import h5py, numpy, torch" 2> /dev/null ||
  { echo "SKIP: $FUSETRAIN_PYTHON lacks torch, h5py or numpy"; exit 77; }
work=$FUSETRAIN_TMP/fast_cifar_pytorch
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

"$FUSETRAIN_BIN_DIR/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 1 --limit 1200 \
  > "$work/prep.log"
"$FUSETRAIN_PYTHON" "$FUSETRAIN_SOURCE/tools/bench/fast_cifar_pytorch.py" --data "$work/data" --device cpu \
  --epochs 2 --batch-size 128 --seed 3 | tee "$work/run.log"

line=$(grep -E '^fast_cifar seed=3 test_acc=[0-9.]+ train_s=[0-9.]+ epochs=2 batch=128 device=cpu precision=fp32 ' \
  "$work/run.log") || fail "no machine-readable fast_cifar line"
grep -qE '^fast_cifar_summary seeds=1 test_acc_mean=' "$work/run.log" || fail "no summary line"
acc=$(sed -E 's/.* test_acc=([0-9.]+) .*/\1/' <<< "$line")
awk -v a="$acc" 'BEGIN { exit !(a > 0.5) }' || fail "test_acc $acc is not above 0.5"
echo "fast_cifar_pytorch: test_acc $acc after 2 epochs on 1200 images"
