#!/usr/bin/env python3
# The interpreted baseline of the RGB -> gray study: a plain Python loop over images, rows and columns,
# as the coursework's reports timed it. Run by `fusetrain bench gray --python-loop THIS_FILE`.
"""Usage: gray_python_loop.py RGB_FILE COUNT SIZE GRAY_FILE

RGB_FILE holds COUNT images of SIZE x SIZE interleaved uint8 RGB; GRAY_FILE receives the gray bytes.
Prints seconds=<time of the loop alone>. The rule is the kernel's: (299 R + 587 G + 114 B + 500) // 1000.
"""
import sys
import time


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    rgb_path, count, size, gray_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(rgb_path, "rb") as f:
        rgb = f.read()
    if len(rgb) != count * size * size * 3:
        print(f"{rgb_path}: {len(rgb)} bytes, expected {count * size * size * 3}", file=sys.stderr)
        return 1
    gray = bytearray(count * size * size)
    start = time.perf_counter()
    for n in range(count):
        for y in range(size):
            for x in range(size):
                i = (n * size + y) * size + x
                r, g, b = rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]
                gray[i] = (299 * r + 587 * g + 114 * b + 500) // 1000
    seconds = time.perf_counter() - start
    with open(gray_path, "wb") as f:
        f.write(gray)
    print(f"seconds={seconds:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
