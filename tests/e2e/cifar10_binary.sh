#!/usr/bin/env bash
# The real CIFAR-10 binary release (../shared/data/cifar10-bin.tar.xz, or FUSETRAIN_CIFAR10_BIN) through
# fusetrain-prep's cifar10 reader: the shards hold exactly what a direct decode of the release's records gives
# (label byte, then the red, green and blue 32x32 planes, row by row), record for record at the start, middle
# and end of every file, in file order, with 5,000 and 1,000 images per class and the per-channel statistics
# the data's README states for the official set.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_PYTHON:?}"
archive=${FUSETRAIN_CIFAR10_BIN:-$FUSETRAIN_SOURCE/../shared/data/cifar10-bin.tar.xz}
[ -f "$archive" ] || { echo "SKIP: $archive not present (FUSETRAIN_CIFAR10_BIN names another)"; exit 77; }
"$FUSETRAIN_PYTHON" -c "import h5py, numpy" 2> /dev/null || { echo "SKIP: $FUSETRAIN_PYTHON lacks h5py or numpy"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
expected=90e786889637a0ecc842de5c863eeb85fdd63980142ee5cc2662959c99a76c44  # the README's
work=$FUSETRAIN_TMP/cifar10_binary
mkdir -p "$work"
# Unpacked once per archive (12 s of xz on one core), kept beside the test's runs.
if [ "$(cat "$work/unpacked.sha256" 2> /dev/null)" != "$expected" ]; then
  [ "$(sha256sum < "$archive" | cut -d' ' -f1)" = "$expected" ] || fail "$archive: its sha256 is not the README's $expected"
  rm -rf "$work/unpacked" "$work/unpacked.sha256" && mkdir -p "$work/unpacked"
  tar -xJf "$archive" -C "$work/unpacked"
  echo "$expected" > "$work/unpacked.sha256"
fi
rm -rf "$work/data"
"$FUSETRAIN_BIN/fusetrain-prep" --format cifar10 --input "$work/unpacked" --output "$work/data" --shards 2 --name cifar10 \
  > "$work/prep.log"
"$FUSETRAIN_PYTHON" - "$work/unpacked/cifar-10-batches-bin" "$work/data" <<'PY' || fail "the shards differ from the release"
import pathlib, sys
import h5py, numpy as np
release, shards = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])

def split(name):
    images, labels = [], []
    for path in sorted(shards.glob(f"{name}-*-of-00002.h5")):
        with h5py.File(path, "r") as f:
            images.append(f["images"][...]); labels.append(f["labels"][...])
            names = [n.decode() if isinstance(n, bytes) else str(n) for n in f.attrs["class_names"]]
    return np.concatenate(images), np.concatenate(labels), names

def record(path, r):
    """Record r of a release file, decoded here: label byte, then 3 planes of 32x32 (R, G, B), row-major."""
    with open(path, "rb") as f:
        f.seek(r * 3073)
        raw = np.frombuffer(f.read(3073), np.uint8)
    return raw[1:].reshape(3, 32, 32).transpose(1, 2, 0), int(raw[0])

train, train_labels, names = split("train")
test, test_labels, _ = split("test")
assert train.shape == (50000, 32, 32, 3) and test.shape == (10000, 32, 32, 3), (train.shape, test.shape)
assert names == "airplane automobile bird cat deer dog frog horse ship truck".split(), names
files = [(release / f"data_batch_{b}.bin", train, train_labels, (b - 1) * 10000) for b in range(1, 6)]
files.append((release / "test_batch.bin", test, test_labels, 0))
checked = 0
for path, images, labels, offset in files:
    assert path.stat().st_size == 10000 * 3073, path
    for r in (0, 1, 4999, 5000, 9998, 9999):
        image, label = record(path, r)
        assert np.array_equal(images[offset + r], image), f"{path.name} record {r}: pixels differ"
        assert labels[offset + r] == label, f"{path.name} record {r}: label {labels[offset + r]}, not {label}"
        checked += 1
for what, labels, per in (("train", train_labels, 5000), ("test", test_labels, 1000)):
    counts = np.bincount(labels, minlength=10)
    assert (counts == per).all(), f"{what}: images per class {counts.tolist()}"
# The README's per-channel mean and standard deviation on 0-255 (the official set's).
readme = {"train": ((125.30692, 122.95039, 113.86538), (62.99322, 62.08871, 66.70490)),
          "test": ((126.02464, 123.70850, 114.85432), (62.89639, 61.93753, 66.70606))}
for what, images in (("train", train), ("test", test)):
    n = images.shape[0] * 1024
    for c in range(3):
        plane = images[..., c]
        total = sum(float(plane[k:k + 5000].sum(dtype=np.float64)) for k in range(0, len(plane), 5000))
        squares = sum(float(np.square(plane[k:k + 5000], dtype=np.float64).sum()) for k in range(0, len(plane), 5000))
        mean = total / n
        std = (squares / n - mean * mean) ** 0.5
        want_mean, want_std = readme[what][0][c], readme[what][1][c]
        assert abs(mean - want_mean) < 1e-4 and abs(std - want_std) < 1e-4, (what, c, mean, std, want_mean, want_std)
print(f"{checked} records decoded directly equal the shards'; classes, order and channel statistics are the README's")
PY
echo "PASS: fusetrain-prep reads the CIFAR-10 binary release as it is laid out"
