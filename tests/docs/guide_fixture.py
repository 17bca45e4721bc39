# The small data the guide test gives the guide's commands: real Fashion-MNIST cut to its first images (IDX),
# a CIFAR-10 binary release made of the repository's CIFAR-10 JPEG subset, and images to classify.
"""Small stand-ins, in the formats the guide names, for data the guide's commands read.

make(scratch, source, fashion_mnist, images): writes into the scratch copy of the repository
  datasets/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz   the first `images` of each split
  cifar-10-binary.tar.gz     cifar-10-batches-bin/ with data_batch_1..5.bin, test_batch.bin, batches.meta.txt:
                             CIFAR-10 JPEGs of tests/data/cifar10-subset.tar.xz, 2 per class per batch
  photos/                    Fashion-MNIST test images as PNG (and one JPEG, in a subfolder)
  shoe.jpg                   a Fashion-MNIST test image of a sneaker
"""
import gzip
import io
import pathlib
import struct
import tarfile

from PIL import Image  # the project's Python environment has it (matplotlib needs it)

SNEAKER = 7  # Fashion-MNIST's class index of "Sneaker"


def _idx_read(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, count = struct.unpack(">II", data[:8])
    dims = [count] + [struct.unpack(">I", data[8 + 4 * i:12 + 4 * i])[0] for i in range((magic & 0xFF) - 1)]
    return magic, dims, data[4 + 4 * len(dims):]


def _idx_cut(src, dst, count):
    magic, dims, body = _idx_read(src)
    per_item = 1
    for d in dims[1:]:
        per_item *= d
    count = min(count, dims[0])
    header = struct.pack(">I", magic) + struct.pack(">" + "I" * len(dims), count, *dims[1:])
    # mtime 0: the same bytes every time, as a release's files are.
    with gzip.GzipFile(dst, "wb", mtime=0) as f:
        f.write(header + body[:count * per_item])


def _fashion_mnist(scratch, fashion_mnist, images):
    out = scratch / "datasets" / "fashion-mnist"
    out.mkdir(parents=True, exist_ok=True)
    for split in ("train", "t10k"):
        for kind in ("images-idx3", "labels-idx1"):
            name = f"{split}-{kind}-ubyte.gz"
            _idx_cut(fashion_mnist / name, out / name, images)
    return out


def _photos(scratch, fashion_mnist_small):
    _, dims, pixels = _idx_read(fashion_mnist_small / "t10k-images-idx3-ubyte.gz")
    _, _, labels = _idx_read(fashion_mnist_small / "t10k-labels-idx1-ubyte.gz")
    h, w = dims[1], dims[2]
    picture = [Image.frombytes("L", (w, h), pixels[i * h * w:(i + 1) * h * w]) for i in range(dims[0])]
    photos = scratch / "photos"
    (photos / "more").mkdir(parents=True, exist_ok=True)
    for i in range(5):
        picture[i].save(photos / f"item{i}.png")
    picture[5].convert("RGB").resize((56, 56)).save(photos / "more" / "item5.jpg", quality=95)
    sneaker = next(i for i, label in enumerate(labels) if label == SNEAKER)
    picture[sneaker].save(scratch / "shoe.jpg", quality=95)


def _cifar10_binary(scratch, source):
    """CIFAR-10's binary layout (label byte, then 1024 R, 1024 G, 1024 B) from the JPEG subset."""
    per_class = {}
    with tarfile.open(source / "tests" / "data" / "cifar10-subset.tar.xz") as tar:
        members = sorted((m for m in tar.getmembers() if m.isfile() and m.name.endswith(".jpg")),
                         key=lambda m: m.name)
        for m in members:
            parts = pathlib.PurePosixPath(m.name).parts  # cifar10-jpg/<split>/<class>/<file>
            split, cls = parts[-3], parts[-2]
            if len(per_class.setdefault((split, cls), [])) < 12:
                per_class[(split, cls)].append(tar.extractfile(m).read())
    classes = sorted({cls for _, cls in per_class})

    def record(jpeg, label):
        image = Image.open(io.BytesIO(jpeg)).convert("RGB").resize((32, 32))
        r, g, b = image.split()
        return bytes([label]) + r.tobytes() + g.tobytes() + b.tobytes()

    files = {}
    for batch in range(5):
        files[f"data_batch_{batch + 1}.bin"] = b"".join(
            record(per_class[("train", c)][2 * batch + k], label) for k in range(2) for label, c in enumerate(classes))
    files["test_batch.bin"] = b"".join(
        record(per_class[("test", c)][k], label) for k in range(2) for label, c in enumerate(classes))
    files["batches.meta.txt"] = ("\n".join(classes) + "\n").encode()
    with tarfile.open(scratch / "cifar-10-binary.tar.gz", "w:gz") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(f"cifar-10-batches-bin/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))


def make(scratch, source, fashion_mnist, images):
    scratch, source = pathlib.Path(scratch), pathlib.Path(source)
    small = _fashion_mnist(scratch, pathlib.Path(fashion_mnist), images)
    _photos(scratch, small)
    _cifar10_binary(scratch, source)
    return small
