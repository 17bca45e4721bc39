#!/usr/bin/env bash
# CPU check of the airbench94 benchmark script: the data it writes from fusetrain-prep shards is what the real
# airbench package's loader reads (same images and labels, normalised), and without a GPU it stops, named.
set -euo pipefail
: "${FUSETRAIN_BIN_DIR:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_PYTHON:?}"
"$FUSETRAIN_PYTHON" -c "import h5py, numpy, torch, importlib.util as u; assert u.find_spec('airbench')" 2> /dev/null ||
  { echo "SKIP: $FUSETRAIN_PYTHON lacks torch, h5py, numpy or airbench (tools/setup.sh installs them)"; exit 77; }
work=$FUSETRAIN_TMP/airbench94
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
script=$FUSETRAIN_SOURCE/tools/bench/airbench94.py

tar -xJf "$FUSETRAIN_SOURCE/tests/data/cifar10-subset.tar.xz" -C "$work"
"$FUSETRAIN_BIN_DIR/fusetrain-prep" --format folder --input "$work/cifar10-jpg" --output "$work/data" --name cifar10 \
  --shards 2 > "$work/prep.log"
"$FUSETRAIN_PYTHON" "$script" --data "$work/data" --work "$work/run" --prepare-only > "$work/prepare.log"
for split in train test; do [ -f "$work/run/cifar10/$split.pt" ] || fail "no cifar10/$split.pt"; done
ls "$work/run/cifar10"/*.partial > /dev/null 2>&1 && fail "a partial file was left behind"

# airbench's own CifarLoader (on the CPU) reads them: every train image once per epoch, normalised as
# airbench normalises, and the same pixels and labels as the shards.
"$FUSETRAIN_PYTHON" - "$FUSETRAIN_SOURCE/tools/bench" "$work/data" "$work/run" <<'PY' || fail "airbench's loader"
import os, sys
import numpy as np, torch
sys.path.insert(0, sys.argv[1])
import airbench94
from pytorch_baseline import read_split
airbench94.provide_torchvision_normalize()
from airbench.utils import CifarLoader, CIFAR_MEAN, CIFAR_STD
shards = read_split(__import__("pathlib").Path(sys.argv[2]), "train")
os.chdir(sys.argv[3])
loader = CifarLoader("cifar10", train=True, batch_size=500, gpu="cpu")
assert len(loader) == len(shards.labels) // 500, (len(loader), len(shards.labels))
assert torch.equal(loader.labels, torch.from_numpy(shards.labels)), "labels differ from the shards"
pixels = (loader.images.float() * 255).round().permute(0, 2, 3, 1).to(torch.uint8)
assert torch.equal(pixels, torch.from_numpy(shards.images)), "pixels differ from the shards"
seen = 0
for images, labels in loader:
    assert images.shape == (500, 3, 32, 32) and images.dtype == torch.float16
    seen += len(labels)
assert seen == len(shards.labels)
norm = loader.proc_images["norm"].float()
expected = (loader.images.float() - torch.tensor(CIFAR_MEAN).view(-1, 1, 1)) / torch.tensor(CIFAR_STD).view(-1, 1, 1)
assert torch.allclose(norm, expected, atol=2e-2), float((norm - expected).abs().max())
print("loader: ok,", seen, "images")
PY

# A shard set that is not CIFAR-10 is refused, naming the folder.
mkdir -p "$work/gray"
"$FUSETRAIN_BIN_DIR/fusetrain-prep" --format folder --input "$work/cifar10-jpg" --output "$work/gray" --name gray \
  --grayscale > "$work/prep_gray.log" 2>&1 || fail "fusetrain-prep --grayscale"
if "$FUSETRAIN_PYTHON" "$script" --data "$work/gray" --work "$work/run_gray" --prepare-only > "$work/gray.log" 2>&1; then
  fail "gray shards were accepted"
fi
grep -q "$work/gray: airbench94 trains on CIFAR-10" "$work/gray.log" || fail "no named refusal: $(cat "$work/gray.log")"

# No GPU here: training stops with the reason, exit non-zero.
if CUDA_VISIBLE_DEVICES='' "$FUSETRAIN_PYTHON" "$script" --data "$work/data" --work "$work/run" --seeds 1 \
     > "$work/no_gpu.log" 2>&1; then
  fail "airbench94.py ran without a CUDA device"
fi
grep -q 'airbench94 trains on a CUDA device only' "$work/no_gpu.log" || fail "no reason given: $(cat "$work/no_gpu.log")"
echo "PASS: airbench's loader reads the shards' images and labels; non-CIFAR-10 data and no GPU are refused"
