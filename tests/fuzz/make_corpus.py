#!/usr/bin/env python3
# Regenerates the seed corpus in tests/fuzz/corpus/<target>/ (small valid and near-valid inputs laid out the
# way each target's FuzzedDataProvider reads them). Run once by hand; the output is kept in the repository.
import gzip
import io
import os
import random
import sys

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
rng = random.Random(7)


def rls(data: bytes) -> bytes:
    """A FuzzedDataProvider::ConsumeRandomLengthString field: backslashes doubled, then a terminator."""
    return data.replace(b"\\", b"\\\\") + b"\\x"


def controls(*values: int) -> bytes:
    """Bytes consumed from the end by ConsumeBool/ConsumeIntegralInRange, first call last."""
    return bytes(reversed(values))


def write(target: str, name: str, data: bytes) -> None:
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def noise(n: int) -> bytes:
    return bytes(rng.randrange(256) for _ in range(n))


def config_seeds() -> None:
    for path in ["configs/quickstart.yaml", "configs/experiments/fashion_mnist.yaml",
                 "configs/coursework/q2b_precision.yaml"]:
        with open(os.path.join(ROOT, path), "rb") as f:
            write("config", os.path.basename(path), f.read())
    write("config", "conv_stack.yaml", b"model: {name: conv_stack, layers: [{type: conv, out: 8}, relu, "
          b"{type: maxpool, kernel: 2, stride: 2}, flatten, {type: linear}]}\ndata: {path: /d}\n")
    write("config", "every_section.yaml", b"model: {name: resnet9, width: 8}\ndata: {path: /d, batch_size: 4, "
          b"augment: {crop_padding: 4, flip: true}}\noptimizer: {name: adamw, lr: 1e-3}\nscheduler: {name: onecycle}\n"
          b"precision: {dtype: fp64}\nregularization: {label_smoothing: 0.1}\ntrain: {epochs: 1, seed: 3}\n"
          b"distributed: {backend: gloo, bucket_mib: 4, first_bucket_mib: 1, timeline: t.json}\n"
          b"output: {dir: runs, name: x}\n")
    write("config", "malformed.yaml", b"model: {name: simple_cnn\ndata:\n  - [path: 3\n")
    write("config", "typo.yaml", b"optimiser: {lr: 0.1}\ntrain: {epochs: two}\n")


def cifar_seeds() -> None:
    rec10 = b"".join(bytes([rng.randrange(10)]) + noise(3072) for _ in range(2))
    rec100 = b"".join(bytes([rng.randrange(20), rng.randrange(100)]) + noise(3072) for _ in range(2))
    # variant, whole, nested, names, no-limit
    write("cifar", "cifar10_whole", rls(rec10) + rec10[:3073] + controls(0, 1, 0, 0, 1))
    write("cifar", "cifar10_names", rls(b"\n".join(b"c%d" % i for i in range(10))) + rls(rec10) + rec10
          + controls(0, 0, 1, 1, 1))
    write("cifar", "cifar100_fine", rls(rec100) + rec100 + controls(1, 0, 0, 0, 0, 1))
    write("cifar", "cifar100_coarse_truncated", rls(rec100[:4000]) + rec100 + controls(2, 0, 0, 0, 1))


def stl10_seeds() -> None:
    pixels = noise(2 * 27648)
    # whole, nested, names, no-limit; train_y, test_y, pixels
    write("stl10", "stl10_whole", rls(b"\x01\x0a") + rls(b"\x05") + pixels + controls(1, 0, 0, 1))
    write("stl10", "stl10_exact", rls(b"\x01\x02") + rls(b"\x03\x04") + pixels + controls(0, 1, 0, 1))
    write("stl10", "stl10_names", rls(b"\n".join(b"k%d" % i for i in range(10))) + rls(b"\x02") + rls(b"\x0b")
          + pixels[:27648] + controls(1, 0, 1, 1))


def idx_seeds() -> None:
    src = "/usr/share/datasets/fashion-mnist"
    with gzip.open(os.path.join(src, "train-images-idx3-ubyte.gz")) as f:
        images = f.read(16 + 3 * 784)
    with gzip.open(os.path.join(src, "train-labels-idx1-ubyte.gz")) as f:
        labels = f.read(8 + 3)
    # Headers without the magic (the target prepends it): count, rows, cols / count.
    img = (3).to_bytes(4, "big") + images[8:]
    lab = (3).to_bytes(4, "big") + labels[8:]
    files = rls(img) + rls(lab) + rls(img) + lab
    # compressed bits, magic, fashion, no-limit
    write("idx", "fashion_raw", files + controls(0, 1, 1, 1))
    write("idx", "fashion_gz_limit", files + controls(15, 1, 1, 0, 2))
    write("idx", "full_files_raw", rls(images) + rls(labels) + rls(images) + labels + controls(0, 0, 0, 1))
    write("idx", "count_mismatch", rls(img) + rls((5).to_bytes(4, "big") + labels[8:]) + rls(img) + lab
          + controls(5, 1, 0, 1))


def encoded(image: Image.Image, fmt: str, **options) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def image_seeds() -> None:
    rgb = Image.frombytes("RGB", (12, 10), noise(12 * 10 * 3))
    gray = Image.frombytes("L", (9, 9), noise(81))
    rgba = Image.frombytes("RGBA", (7, 5), noise(7 * 5 * 4))
    # png name, no-resize, (resize), second class
    write("image_folder", "rgb.jpg", encoded(rgb, "JPEG", quality=80) + controls(0, 1, 1))
    write("image_folder", "progressive.jpg", encoded(rgb, "JPEG", progressive=True) + controls(0, 0, 7, 0))
    write("image_folder", "gray.jpg", encoded(gray, "JPEG") + controls(1, 1, 0))
    write("image_folder", "rgb.png", encoded(rgb, "PNG") + controls(1, 0, 3, 1))
    write("image_folder", "rgba.png", encoded(rgba, "PNG") + controls(1, 1, 0))
    write("image_folder", "palette.png", encoded(rgb.convert("P"), "PNG") + controls(0, 1, 0))
    write("image_folder", "gray16.png", encoded(gray.convert("I;16"), "PNG") + controls(1, 0, 16, 0))


def regression_seeds() -> None:
    """Inputs that once broke a reader; kept so the fuzz test fails until the reader is fixed."""
    import struct
    import zlib
    # IDX header claiming 2^32-1 images of 65536x65536: the reader reserved memory from the header alone.
    img = (0xFFFFFFFF).to_bytes(4, "big") + (65536).to_bytes(4, "big") * 2
    lab = (0xFFFFFFFF).to_bytes(4, "big")
    write("idx", "regression_huge_count", rls(img) + rls(lab) + rls(img) + lab + controls(0, 1, 0, 1))
    # A 700-byte JPEG whose header says 65000x65000: 12 GB allocated and zeroed before decoding fails.
    jpeg = bytearray(encoded(Image.frombytes("RGB", (12, 10), noise(360)), "JPEG"))
    sof = jpeg.find(b"\xff\xc0")
    jpeg[sof + 5:sof + 9] = (65000).to_bytes(2, "big") * 2
    write("image_folder", "regression_huge_jpeg", bytes(jpeg) + controls(0, 1, 0))

    # A PNG header saying 900000x900000: PNG_IMAGE_SIZE wraps around 32 bits and 3.3 GB are zeroed.
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 900000, 900000, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(b"\0" * 100)) + chunk(b"IEND", b""))
    write("image_folder", "regression_huge_png", png + controls(1, 1, 0))


if __name__ == "__main__":
    config_seeds()
    cifar_seeds()
    stl10_seeds()
    idx_seeds()
    image_seeds()
    regression_seeds()
    sys.exit(0)
