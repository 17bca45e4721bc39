#!/usr/bin/env bash
# `fusetrain bench gray` on real Fashion-MNIST images: the table has the interpreted, scalar, CPU-rule
# and CUDA rows, the Python loop agrees with the kernel rule, and the four sample pairs are valid PNGs.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_SOURCE:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/t10k-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
# The Python loop indexes torch tensors: it runs with the project's Python (--python).
python=${FUSETRAIN_PYTHON:-python3}
"$python" -c "import torch" 2> /dev/null || { echo "SKIP: $python has no torch"; exit 77; }
work=$FUSETRAIN_TMP/bench_gray
rm -rf "$work" && mkdir -p "$work"

"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --limit 200
"$FUSETRAIN_BIN/fusetrain" bench gray --data "$work/data" --images 20 --size 40 --iterations 3 --warmup 1 \
  --python "$python" --python-loop "$FUSETRAIN_SOURCE/tools/bench/gray_python_loop.py" --out "$work/samples" |
  tee "$work/table.md"
grep -q "^RGB->gray of 20 images at 40x40" "$work/table.md"
grep -q "^| Python loop (interpreted, once) | " "$work/table.md"
grep -q "^| scalar C++ loop (floating point) | .* | 1x |" "$work/table.md"
grep -q "^| kernel rule on the CPU | " "$work/table.md"
grep -q "^| CUDA kernel" "$work/table.md"

# The defaults (200 images at 128x128, 10 timed repetitions), and each CPU row's median in milliseconds: 3.3
# million pixels (13 MB read and written) in under 0.05 ms would need over 260 GB/s, more than any CPU core moves.
"$FUSETRAIN_BIN/fusetrain" bench gray --data "$work/data" --out "$work/defaults" | tee "$work/defaults.md"
grep -q "^RGB->gray of 200 images at 128x128 (.* MB in), median of 10$" "$work/defaults.md" ||
  { echo "FAIL: the defaults are not 200 images at 128x128 and 10 repetitions" >&2; exit 1; }
awk -F'|' '/^\| (scalar C\+\+ loop|kernel rule on the CPU)/ { rows++; if ($3 + 0 < 0.05) { print "FAIL: " $0 " is not in milliseconds"; exit 1 } }
  END { if (rows != 2) { print "FAIL: expected the two CPU rows"; exit 1 } }' "$work/defaults.md"
python3 - "$work/samples" <<'PY'
import struct, sys, zlib
folder = sys.argv[1]
for k in range(4):
    for kind, color_type in (("color", 2), ("gray", 0)):
        data = open(f"{folder}/sample_{k}_{kind}.png", "rb").read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", f"sample_{k}_{kind}.png is not a PNG"
        pos, idat, header = 8, b"", None
        while pos < len(data):  # chunks: length, tag, payload, CRC
            (length,), tag = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
            if tag == b"IHDR":
                header = struct.unpack(">IIBB", data[pos + 8:pos + 18])
            elif tag == b"IDAT":
                idat += data[pos + 8:pos + 8 + length]
            pos += 12 + length
        assert header == (40, 40, 8, color_type), (kind, header)
        channels = 3 if kind == "color" else 1
        assert len(zlib.decompress(idat)) == 40 * (40 * channels + 1), f"sample_{k}_{kind}.png pixel data"
print("8 sample PNGs of 40x40 (4 RGB, 4 gray)")
PY
