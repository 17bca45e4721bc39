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

# The data files are kept while the shards are the same files (a cold process per seed reads them, never
# writes them), and written again when a shard changes.
before=$(stat -c %y "$work/run/cifar10/train.pt")
"$FUSETRAIN_PYTHON" "$script" --data "$work/data" --work "$work/run" --prepare-only > /dev/null
[ "$(stat -c %y "$work/run/cifar10/train.pt")" = "$before" ] || fail "the data files were written again for the same shards"
touch "$work/data/train-00000-of-00002.h5"
"$FUSETRAIN_PYTHON" "$script" --data "$work/data" --work "$work/run" --prepare-only > /dev/null
[ "$(stat -c %y "$work/run/cifar10/train.pt")" != "$before" ] || fail "the data files were kept for changed shards"

# The recorder's figures from airbench's calls in airbench's order (utils.train: after each epoch an evaluation
# without TTA, then its line; after the last, the TTA evaluation and the final line), with a stand-in for
# airbench.utils: epochs_s are the differences of the running total, the evaluations between epochs (all but
# the last epoch's) count in eval_between_s, train_s leaves the TTA evaluation out, steps come from the run.
"$FUSETRAIN_PYTHON" - "$FUSETRAIN_SOURCE/tools/bench" <<'PY' || fail "the recorder's figures"
import sys, time, types
sys.path.insert(0, sys.argv[1])
import airbench94
utils = types.SimpleNamespace(print_training_details=lambda variables, final: None,
                              evaluate=lambda model, loader, tta_level=0: time.sleep(0.05 * (1 + tta_level)) or 0.5)
recorder = airbench94.RunRecorder(utils)
utils.print_training_details({"epoch": None, "total_time_seconds": 0.0}, False)  # the warm-up's line
recorder.start()
for epoch, total in enumerate([1.5, 2.0, 2.75]):
    utils.evaluate(None, None, tta_level=0)
    utils.print_training_details({"epoch": epoch, "total_time_seconds": total}, False)
utils.evaluate(None, None, tta_level=2)
utils.print_training_details({"epoch": "eval", "total_time_seconds": 3.0, "tta_val_acc": 0.9412,
                              "current_steps": 476}, True)
fields = dict(item.split("=") for item in recorder.figures(7).split()[1:])
assert fields["seed"] == "7" and fields["test_acc"] == "0.9412" and fields["steps"] == "476", fields
assert fields["epochs_s"] == "1.5000,0.5000,0.7500", fields["epochs_s"]
assert abs(float(fields["eval_between_s"]) - 0.1) < 0.03, fields  # two of the three 0.05 s evaluations
assert abs(float(fields["train_s"]) - (3.0 - 0.15)) < 0.03, fields  # the TTA evaluation took 0.15 s
assert float(fields["cold_s"]) > 0, fields
print("recorder: ok,", recorder.figures(7))
PY

# The profile of steps 21-33 (20 waited, 3 warm-up, 10 recorded), counted by the optimizer's step hook, on a
# stand-in loop of 40 SGD steps on the CPU: exactly the 10 recorded steps' markers in the trace, numbered from 23,
# the hook gone afterwards, and trace_summary.py reads the trace.
"$FUSETRAIN_PYTHON" - "$FUSETRAIN_SOURCE/tools/bench" "$work/profile.json" <<'PY' || fail "the profile of airbench's steps"
import json, pathlib, sys, torch
import torch.optim.optimizer as optimizer_hooks
sys.path.insert(0, sys.argv[1])
import airbench94
w = torch.nn.Parameter(torch.ones(4))
optimizer = torch.optim.SGD([w], lr=0.1)
def work():
    for _ in range(40):
        (w * w).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
    return "done"
assert airbench94.profiled(pathlib.Path(sys.argv[2]), work) == "done"
events = json.load(open(sys.argv[2]))["traceEvents"]
marks = sorted(int(e["name"].split("#")[1]) for e in events if str(e.get("name", "")).startswith("ProfilerStep#"))
assert marks == list(range(23, 33)), marks
assert not optimizer_hooks._global_optimizer_post_hooks, "the step hook was left behind"
PY
"$FUSETRAIN_PYTHON" "$FUSETRAIN_SOURCE/tools/bench/trace_summary.py" "$work/profile.json" --steps 10 --label stand_in |
  grep -q '^trace_summary label=stand_in steps=10 ' || fail "trace_summary.py does not read the profile"

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
echo "PASS: airbench's loader reads the shards' images and labels; the data files are kept for the same shards;"\
  "the recorder's figures add up; non-CIFAR-10 data and no GPU are refused"
