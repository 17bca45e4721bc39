#!/usr/bin/env bash
# `fusetrain bench step` on the CPU: a rate for 1 and 2 ranks in fp32, the same with channels-last, and
# clear refusals of a precision that does not exist and of one the CPU does not train in; --allow-device-sharing
# on the CPU (default world sizes 1 and 2) and its refusal with NCCL; --cuda-graphs refused on the CPU.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}"
work=$FUSETRAIN_TMP/bench_step
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
# bench step launches its own mpirun (with --oversubscribe --bind-to none), not the tests' line.
step() { env -u FUSETRAIN_MPIRUN "$FUSETRAIN_BIN/fusetrain" bench step --model simple_cnn --device cpu --batch 16 \
  --steps 2 --warmup 1 "$@"; }
# rate RANKS FILE: the row of RANKS has a rate a CPU can reach: above 0 and below a million images/s (a
# simple_cnn image's forward and backward take some tens of MFLOP: a million a second is tens of TFLOP/s).
rate() { awk -F' *[|] *' -v r="$1" '$2 == r && $3 + 0 > 0 && $3 + 0 < 1e6 { ok = 1 } END { exit !ok }' "$2"; }

step --ranks 1,2 | tee "$work/fp32.md"
grep -q "^threads per rank: [0-9]*, precision fp32$" "$work/fp32.md" || fail "no fp32 header"
for ranks in 1 2; do
  rate "$ranks" "$work/fp32.md" ||
    fail "no images/s for $ranks rank(s) in fp32"
done
step --ranks 1 --channels-last | tee "$work/cl.md"
grep -q "precision fp32, channels-last$" "$work/cl.md" || fail "no channels-last header"
rate 1 "$work/cl.md" || fail "no channels-last rate"

if step --ranks 1 --precision fp8 > "$work/fp8.log" 2>&1; then fail "--precision fp8 was accepted"; fi
grep -q "error: --precision: 'fp8' is not one of fp32|fp16|bf16|fp64" "$work/fp8.log" || { cat "$work/fp8.log"; fail "unclear fp8 error"; }
grep -q "mpirun" "$work/fp8.log" && fail "an unknown precision reached mpirun"
step --ranks 1 --precision bf16 --channels-last | tee "$work/bf16.md"
grep -q "precision bf16, channels-last$" "$work/bf16.md" || fail "no bf16 channels-last header"
rate 1 "$work/bf16.md" || fail "no bf16 rate on the CPU"
if step --ranks 1 --precision fp16 > "$work/fp16.log" 2>&1; then fail "fp16 on the CPU was accepted"; fi
grep -q "error: --precision fp16 needs a CUDA device; use bf16 (CPU autocast) or fp32 on CPU" "$work/fp16.log" ||
  { cat "$work/fp16.log"; fail "unclear fp16 error"; }
step --allow-device-sharing | tee "$work/shared.md"
for ranks in 1 2; do
  rate "$ranks" "$work/shared.md" ||
    fail "no images/s for $ranks rank(s) by default on the CPU with --allow-device-sharing"
done
if step --ranks 2 --allow-device-sharing --backend nccl > "$work/nccl.log" 2>&1; then fail "NCCL sharing was accepted"; fi
grep -q "error: --allow-device-sharing cannot be used with --backend nccl" "$work/nccl.log" ||
  { cat "$work/nccl.log"; fail "unclear NCCL sharing error"; }
grep -q "mpirun" "$work/nccl.log" && fail "NCCL sharing reached mpirun"
# NCCL takes device pointers: on the CPU it is refused before mpirun, as training refuses it.
if step --ranks 1 --backend nccl > "$work/nccl_cpu.log" 2>&1; then fail "--backend nccl was accepted on the CPU"; fi
grep -q "error: --backend nccl needs CUDA devices (--device cpu: " "$work/nccl_cpu.log" ||
  { cat "$work/nccl_cpu.log"; fail "unclear NCCL-on-CPU error"; }
grep -q "mpirun" "$work/nccl_cpu.log" && fail "NCCL on the CPU reached mpirun"
if step --ranks 1 --cuda-graphs > "$work/graphs.log" 2>&1; then fail "--cuda-graphs was accepted on the CPU"; fi
grep -q "error: --cuda-graphs needs a CUDA device (--device cpu)" "$work/graphs.log" ||
  { cat "$work/graphs.log"; fail "unclear --cuda-graphs-on-CPU error"; }
echo PASS
