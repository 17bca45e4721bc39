#!/usr/bin/env python3
# The interpreted baseline of the RGB -> gray study: a plain Python loop over images, rows and columns that
# indexes torch tensors, as the coursework's reports timed it. Run by `fusetrain bench gray --python-loop THIS_FILE`.
"""Usage: gray_python_loop.py RGB_FILE COUNT SIZE GRAY_FILE

RGB_FILE holds COUNT images of SIZE x SIZE interleaved uint8 RGB; they are loaded into a torch uint8 tensor
[COUNT, SIZE, SIZE, 3] and converted one pixel at a time into a uint8 tensor [COUNT, SIZE, SIZE], whose
bytes go to GRAY_FILE. Prints seconds=<time of the loop alone>. The rule is the kernel's:
(299 R + 587 G + 114 B + 500) // 1000. Needs torch (the project's venv has it).
"""
import sys
import time


def convert(rgb, gray) -> None:
    """The students' loop: every pixel read from and written to the tensors by index."""
    count, size = rgb.shape[0], rgb.shape[1]
    for n in range(count):
        for y in range(size):
            for x in range(size):
                r, g, b = rgb[n, y, x].tolist()
                gray[n, y, x] = (299 * r + 587 * g + 114 * b + 500) // 1000


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import torch
    except ModuleNotFoundError as e:
        print(f"gray_python_loop.py: the Python module '{e.name}' is missing from {sys.executable}; "
              "run it with the project's venv python (it has torch)", file=sys.stderr)
        return 1
    rgb_path, count, size, gray_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(rgb_path, "rb") as f:
        data = bytearray(f.read())
    if len(data) != count * size * size * 3:
        print(f"{rgb_path}: {len(data)} bytes, expected {count * size * size * 3}", file=sys.stderr)
        return 1
    rgb = torch.frombuffer(data, dtype=torch.uint8).reshape(count, size, size, 3)
    gray = torch.zeros(count, size, size, dtype=torch.uint8)
    start = time.perf_counter()
    convert(rgb, gray)
    seconds = time.perf_counter() - start
    with open(gray_path, "wb") as f:
        f.write(gray.numpy().tobytes())
    print(f"seconds={seconds:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
