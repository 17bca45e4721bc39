#!/usr/bin/env bash
# One network (argument: simple_cnn, conv_stack, resnet18, resnet9 or fast_cifar) trained briefly on Fashion-MNIST,
# exported to safetensors and torch, and checked as its PyTorch twin against fusetrain evaluate and ONNX Runtime.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_PYTHON:?}"
model=${1:?model name}
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
"$FUSETRAIN_PYTHON" -c "import h5py, numpy, onnx, onnxruntime, safetensors, torch, yaml" 2> /dev/null ||
  { echo "SKIP: $FUSETRAIN_PYTHON lacks a package of tools/export (tools/setup.sh installs them)"; exit 77; }
work=$FUSETRAIN_TMP/$model
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Each network's options: small widths keep the runs short; conv_stack covers every layer type (model.conv_relu
# stays aten: training on the CPU refuses the fused CUDA kernel); resnet9 runs on images resized to 32x32.
resize=()
case $model in
  simple_cnn) spec="{name: simple_cnn, dropout: 0.2}" ;;
  conv_stack) spec="{name: conv_stack, layers: [{type: conv, out: 8}, relu, bn, {type: maxpool, kernel: 2, stride: 2},
                {type: conv, out: 12, kernel: 3, padding: 0}, gelu, {type: avgpool, kernel: 2, stride: 2},
                {type: dropout, p: 0.2}, flatten, {type: linear, out: 32}, bn, relu, linear]}" ;;
  resnet18) spec="{name: resnet18, width: 16}" ;;
  resnet9) spec="{name: resnet9, width: 8}"; resize=(--resize 32) ;;
  fast_cifar) spec="{name: fast_cifar, width: 16, whiten_bias_epochs: 1}" ;;
  *) fail "unknown model '$model'" ;;
esac

"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 2 --limit 1000 \
  "${resize[@]}" > "$work/prep.log"
# One short epoch of 256 images (8 steps of 32): the BatchNorm running statistics move well away from 0 and 1.
cat > "$work/run.yaml" <<YAML
model: $spec
data: {path: $work/data, batch_size: 32, test_batch_size: 500, limit_train: 256}
optimizer: {name: sgd, lr: 0.02, momentum: 0.9}
train: {epochs: 1, seed: 3, device: cpu}
output: {dir: $work/runs, name: $model}
YAML
"$FUSETRAIN_BIN/fusetrain" train --config "$work/run.yaml" > "$work/train.log" ||
  { cat "$work/train.log"; fail "training"; }
trained=$work/runs/$model.model
[ -f "$trained" ] || fail "no model file $trained"

"$FUSETRAIN_BIN/fusetrain" export --checkpoint "$trained" --format safetensors --out "$work/$model.safetensors"
"$FUSETRAIN_BIN/fusetrain" export --checkpoint "$trained" --format torch --out "$work/$model.pt"
"$FUSETRAIN_BIN/fusetrain" evaluate --checkpoint "$trained" --logits 256 --out "$work/eval.h5" > "$work/eval.log" ||
  { cat "$work/eval.log"; fail "evaluate"; }

# The twin's logits on the first 256 test images equal fusetrain's within 1e-5 relative (max|a - b| / max|b|), its
# accuracy over the 1000 test images equals evaluate's, ONNX Runtime's logits equal the twin's within 1e-4.
"$FUSETRAIN_PYTHON" "$FUSETRAIN_SOURCE/tests/export/check_export.py" "$FUSETRAIN_SOURCE" "$work/$model.safetensors" \
  "$work/$model.pt" "$work/$model.onnx" "$work/eval.h5" "$work/data" | tee "$work/check.log"
grep -q "^top-1 over 1000 test images: .* ok$" "$work/check.log" || fail "the check did not cover the whole test split"
