#!/usr/bin/env bash
# bench kernels and bench batch-size on a machine without a GPU: their tables' headers and CPU rows, the
# defaults they print (batch 32; a CPU ceiling of 1024 images, reached exactly by doubling 512), "n/a" where
# no GPU was sampled, and a LibTorch error reported in one line, with its backtrace only under
# FUSETRAIN_BACKTRACE.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}"
work=$FUSETRAIN_TMP/bench_cpu
rm -rf "$work" && mkdir -p "$work"
ft=$FUSETRAIN_BIN/fusetrain
fail() { echo "FAIL: $*" >&2; exit 1; }

# Kernels at their default batch: the header names it, the table has its header and a timed CPU row.
"$ft" bench kernels --iterations 1 --warmup 0 --size 8 --channels 4 --out-channels 4 | tee "$work/kernels.md"
head -n 1 "$work/kernels.md" | grep -q "^conv 3x3, 4->4 channels, 8x8 images, batch 32, median of 1$" ||
  fail "bench kernels' header does not name the default batch 32"
grep -qx '| implementation | device | forward_ms | backward_ms |' "$work/kernels.md" || fail "no table header"
grep -qE '^\| ATen conv2d \+ relu \| cpu \| [0-9]+\.[0-9]{3} \| -?[0-9]+\.[0-9]{3} \|$' "$work/kernels.md" ||
  fail "no timed CPU row"

# A kernel of size 0 is refused by LibTorch: one line naming the command, exit 1; the backtrace on request.
status=0
"$ft" bench kernels --kernel 0 --iterations 1 --warmup 0 --batch 1 --size 4 > /dev/null 2> "$work/error.txt" || status=$?
[ "$status" = 1 ] || fail "a LibTorch error exits $status, not 1"
grep -q "^fusetrain bench kernels: error: kernel size should be greater than zero" "$work/error.txt" ||
  fail "the LibTorch error is not reported: $(cat "$work/error.txt")"
[ "$(wc -l < "$work/error.txt")" = 1 ] || fail "the error is not one line without FUSETRAIN_BACKTRACE: $(cat "$work/error.txt")"
FUSETRAIN_BACKTRACE=1 "$ft" bench kernels --kernel 0 --iterations 1 --warmup 0 --batch 1 --size 4 > /dev/null \
  2> "$work/backtrace.txt" || true
grep -q "^Exception raised from " "$work/backtrace.txt" || fail "FUSETRAIN_BACKTRACE=1 gives no backtrace"

# Batch sizes 512 and 1024 (the CPU ceiling, reached exactly), then no more; no GPU utilisation to report.
"$ft" bench batch-size --start 512 --steps 1 --warmup 0 --image 1x8x8 | tee "$work/batch.md"
rows=$(sed -n 's/^| \([0-9]*\) | [0-9.]* | [0-9.]* | n\/a |$/\1/p' "$work/batch.md" | paste -sd' ')
[ "$rows" = "512 1024" ] || fail "batch rows '$rows', not '512 1024' each with gpu_util n/a"
grep -qx "largest batch that fits: 1024 (ceiling reached)" "$work/batch.md" || fail "the ceiling line is wrong"
echo "PASS"
