#!/usr/bin/env bash
# CPU check of the airbench94_muon harness: it writes the data files the public script reads from fusetrain-prep
# shards, names a missing script, loads a script as a module without running its __main__ block, and without a
# GPU stops, named. (The public script itself is carried to GPU hosts by tools/gpu-host/bundle.sh, not kept here.)
set -euo pipefail
: "${FUSETRAIN_BIN_DIR:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_PYTHON:?}"
"$FUSETRAIN_PYTHON" -c "import h5py, numpy, torch" 2> /dev/null ||
  { echo "SKIP: $FUSETRAIN_PYTHON lacks torch, h5py or numpy (tools/setup.sh installs them)"; exit 77; }
work=$FUSETRAIN_TMP/airbench94_muon
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
harness=$FUSETRAIN_SOURCE/tools/bench/airbench94_muon.py

tar -xJf "$FUSETRAIN_SOURCE/tests/data/cifar10-subset.tar.xz" -C "$work"
"$FUSETRAIN_BIN_DIR/fusetrain-prep" --format folder --input "$work/cifar10-jpg" --output "$work/data" --name cifar10 \
  --shards 2 > "$work/prep.log"
"$FUSETRAIN_PYTHON" "$harness" --data "$work/data" --work "$work/run" --prepare-only > "$work/prepare.log"
for split in train test; do [ -f "$work/run/cifar10/$split.pt" ] || fail "no cifar10/$split.pt"; done
"$FUSETRAIN_PYTHON" - "$work/run/cifar10" <<'PY' || fail "the data files"
import sys, torch
train, test = (torch.load(f"{sys.argv[1]}/{s}.pt") for s in ("train", "test"))
assert train["images"].shape == (5000, 32, 32, 3) and train["images"].dtype == torch.uint8, train["images"].shape
assert test["images"].shape == (1000, 32, 32, 3), test["images"].shape
assert sorted(set(train["labels"].tolist())) == list(range(10)) and len(train["classes"]) == 10
PY

# Without --script (or with one that is not a file) the harness names what it needs.
if "$FUSETRAIN_PYTHON" "$harness" --data "$work/data" --work "$work/run" --seeds 1 > "$work/no_script.log" 2>&1; then
  fail "ran without the script"
fi
grep -q "airbench94_muon.py from KellerJordan/cifar10-airbench" "$work/no_script.log" || fail "$(cat "$work/no_script.log")"

# A stand-in with the public script's names: loaded as a module, its __main__ block is not run (it would exit 3).
cat > "$work/stand_in.py" <<'PY'
def CifarNet(): pass
def main(run, model): pass
def evaluate(model, loader, tta_level=0): pass
def print_training_details(variables, is_final_entry): pass
if __name__ == "__main__":
    raise SystemExit(3)
PY
"$FUSETRAIN_PYTHON" - "$FUSETRAIN_SOURCE/tools/bench" "$work/stand_in.py" <<'PY' || fail "the stand-in did not load"
import pathlib, sys
sys.path.insert(0, sys.argv[1])
import airbench94_muon
module = airbench94_muon.load_script(pathlib.Path(sys.argv[2]))
assert module.__name__ == "airbench94_muon" and callable(module.main)
PY
echo "def main(): pass" > "$work/other.py"
"$FUSETRAIN_PYTHON" - "$FUSETRAIN_SOURCE/tools/bench" "$work/other.py" > "$work/other.log" 2>&1 <<'PY' &&
import pathlib, sys
sys.path.insert(0, sys.argv[1])
import airbench94_muon
airbench94_muon.load_script(pathlib.Path(sys.argv[2]))
PY
  fail "another script was taken for airbench94_muon.py"
grep -q "no CifarNet" "$work/other.log" || fail "no named refusal: $(cat "$work/other.log")"

# The recorder under the script's own names and order (a stand-in for its module): its warm-up run prints epoch
# lines too, which the start of the first seed forgets; the running total is time_seconds, the steps step; the
# evaluations between epochs lie outside the script's timer and the last one (with TTA) inside it.
"$FUSETRAIN_PYTHON" - "$FUSETRAIN_SOURCE/tools/bench" <<'PY' || fail "the recorder's figures under the script's names"
import sys, time, types
sys.path.insert(0, sys.argv[1])
import airbench94
module = types.SimpleNamespace(print_training_details=lambda variables, final: None,
                               evaluate=lambda model, loader, tta_level=0: time.sleep(0.05 * (1 + tta_level)) or 0.5)
recorder = airbench94.RunRecorder(module, name="airbench94_muon", time_key="time_seconds", steps_key="step")
def run(totals, final_total, accuracy, steps):
    for epoch, total in enumerate(totals):
        module.evaluate(None, None, tta_level=0)
        module.print_training_details({"epoch": epoch, "time_seconds": total, "step": 25 * (epoch + 1)}, False)
    module.evaluate(None, None, tta_level=2)
    module.print_training_details({"epoch": "eval", "time_seconds": final_total, "tta_val_acc": accuracy,
                                   "step": steps}, True)
run([0.9, 1.8, 2.7], 3.0, 0.1, 75)  # the warm-up run, on random labels
recorder.start()
run([1.0, 1.25, 1.75], 2.0, 0.9401, 200)
line = recorder.figures(3)
assert line.startswith("airbench94_muon seed=3 "), line
fields = dict(item.split("=") for item in line.split()[1:])
assert fields["test_acc"] == "0.9401" and fields["steps"] == "200" and fields["airbench_s"] == "2.000", fields
assert fields["epochs_s"] == "1.0000,0.2500,0.5000", fields["epochs_s"]  # the warm-up's epochs forgotten
assert abs(float(fields["train_s"]) - (2.0 - 0.15)) < 0.03, fields
assert abs(float(fields["eval_between_s"]) - 0.1) < 0.03, fields
assert float(fields["cold_s"]) > 0, fields
later = dict(item.split("=") for item in recorder.figures(4, cold=False).split()[1:])
assert later["cold_s"] == "-" and later["train_s"] == fields["train_s"], later  # a later seed of the process
print("recorder: ok,", line)
PY

# No GPU here: training stops with the reason, exit non-zero.
if CUDA_VISIBLE_DEVICES='' "$FUSETRAIN_PYTHON" "$harness" --data "$work/data" --work "$work/run" --seeds 1 \
     --script "$work/stand_in.py" > "$work/no_gpu.log" 2>&1; then
  fail "airbench94_muon.py ran without a CUDA device"
fi
grep -q 'trains on a CUDA device only' "$work/no_gpu.log" || fail "no reason given: $(cat "$work/no_gpu.log")"
echo "PASS: the harness writes the script's data files, loads a script without its __main__, records its runs' figures"\
  "under its own names, and refuses no script or no GPU"
