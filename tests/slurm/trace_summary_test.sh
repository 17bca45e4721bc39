#!/usr/bin/env bash
# tools/bench/trace_summary.py: on a made-up trace its figures are exact (overlapping kernels counted once,
# copies counted, host events not); on a real CPU run's profile.trace it reads fusetrain's own output.
set -euo pipefail
: "${FUSETRAIN_BIN_DIR:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_PYTHON:?}"
work=$FUSETRAIN_TMP/trace_summary
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
tool=$FUSETRAIN_SOURCE/tools/bench/trace_summary.py

# 2 steps in 40 us: kernels at [0,10) and [5,15) overlap (15 us busy), a copy at [20,25) adds 5, the host
# event spans the window and counts for nothing: 20 us busy, 10 us per step, half the wall time.
cat > "$work/made_up.json" <<'JSON'
{"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "ts": 1000, "dur": 40},
  {"ph": "X", "cat": "kernel", "name": "conv_kernel", "ts": 1000, "dur": 10},
  {"ph": "X", "cat": "kernel", "name": "relu_kernel", "ts": 1005, "dur": 10},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD", "ts": 1020, "dur": 5},
  {"ph": "i", "cat": "instant", "name": "marker", "ts": 1100}
]}
JSON
"$FUSETRAIN_PYTHON" "$tool" "$work/made_up.json" --steps 2 --label made_up > "$work/made_up.txt"
grep -qx 'trace_summary label=made_up steps=2 wall_ms_per_step=0.020 gpu_busy_ms_per_step=0.010 gpu_busy_fraction=0.500 kernels=3' \
  "$work/made_up.txt" || fail "made-up trace: $(head -n 1 "$work/made_up.txt")"
grep -q 'conv_kernel' "$work/made_up.txt" || fail "no kernel table"

# A CPU run's own trace: wall time per step, no device activity.
tar -xJf "$FUSETRAIN_SOURCE/tests/data/cifar10-subset.tar.xz" -C "$work"
"$FUSETRAIN_BIN_DIR/fusetrain-prep" --format folder --input "$work/cifar10-jpg" --output "$work/data" --name cifar10 \
  --limit 512 > "$work/prep.log"
cat > "$work/run.yaml" <<YAML
data: {path: $work/data, batch_size: 64}
model: {name: simple_cnn}
train: {epochs: 1, device: cpu, threads: 1}
distributed: {backend: mpi}
profile: {wait: 1, warmup: 1, active: 3, trace: $work/trace.json}
output: {dir: $work/runs, name: profiled}
YAML
"$FUSETRAIN_BIN_DIR/fusetrain" train --config "$work/run.yaml" > "$work/train.log" 2>&1 || fail "training: $(tail -n 3 "$work/train.log")"
"$FUSETRAIN_PYTHON" "$tool" "$work/trace.json" --steps 3 > "$work/real.txt"
grep -qE '^trace_summary label=trace steps=3 wall_ms_per_step=[0-9]*[1-9][0-9]*\.[0-9]+ gpu_busy_ms_per_step=0\.000 ' \
  "$work/real.txt" || fail "CPU trace: $(head -n 1 "$work/real.txt")"
if "$FUSETRAIN_PYTHON" "$tool" "$work/run.yaml" --steps 3 > "$work/bad.txt" 2>&1; then fail "a YAML file was read as a trace"; fi
grep -q "run.yaml: not a readable Chrome trace" "$work/bad.txt" || fail "no named refusal: $(cat "$work/bad.txt")"
echo "PASS: $(head -n 1 "$work/real.txt")"
