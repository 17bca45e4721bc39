#!/usr/bin/env bash
# prep -> train -> predict on real Fashion-MNIST: the test split written out as PNG files in class folders
# must be classified exactly as the run's final evaluation did (PNG is lossless), and predict's size,
# corrupt-file, --top and atomic --out behaviour hold on real files.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_PYTHON:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
"$FUSETRAIN_PYTHON" -c "import h5py, PIL" 2>/dev/null ||
  { echo "SKIP: $FUSETRAIN_PYTHON lacks h5py or pillow"; exit 77; }
FT=$FUSETRAIN_BIN/fusetrain
work=$FUSETRAIN_TMP/predict_images
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 1 --limit 2000
cat > "$work/run.yaml" <<YAML
model: {name: simple_cnn, dropout: 0.1}
data: {path: $work/data, batch_size: 64, limit_train: 1000}
optimizer: {name: adam, lr: 0.002}
train: {epochs: 1, seed: 4, device: cpu}
output: {dir: $work/runs, name: pred}
YAML
"$FT" train --config "$work/run.yaml" > "$work/train.log"
model=$work/runs/pred.model
[ -f "$model" ] || fail "training wrote no $model"

# The test split as PNG files: images/<label>/<index>.png (class names hold '/', so folders are labels).
"$FUSETRAIN_PYTHON" - "$work/data/test-00000-of-00001.h5" "$work/images" <<'PY'
import os, sys, h5py
from PIL import Image
with h5py.File(sys.argv[1], "r") as f:
    images, labels = f["images"][:], f["labels"][:]
for i, (image, label) in enumerate(zip(images, labels)):
    folder = os.path.join(sys.argv[2], f"{label:02d}")
    os.makedirs(folder, exist_ok=True)
    Image.fromarray(image[:, :, 0], mode="L").save(os.path.join(folder, f"{i:05d}.png"))
PY

"$FT" predict --checkpoint "$model" "$work/images" --out "$work/p.csv" 2> "$work/predict.err"
[ ! -s "$work/predict.err" ] || fail "predict on same-size PNGs wrote to stderr: $(cat "$work/predict.err")"
# Accuracy from the CSV (the folder is the true label) against the run's own final evaluation.
read -r correct total < <("$FUSETRAIN_PYTHON" - "$work/p.csv" "$work/data/test-00000-of-00001.h5" <<'PY'
import csv, sys, h5py
names = [n.decode() if isinstance(n, bytes) else n for n in h5py.File(sys.argv[2], "r").attrs["class_names"]]
rows = list(csv.DictReader(open(sys.argv[1])))
print(sum(names[int(r["path"].split("/")[-2])] == r["class1"] for r in rows), len(rows))
PY
)
acc=$("$FT" inspect "$work/runs/pred.h5" /summary/final_test_acc)
echo "predict: $correct of $total correct; the run's final test accuracy: $acc"
[ "$total" = 2000 ] || fail "CSV has $total rows, expected 2000"
awk -v c="$correct" -v t="$total" -v a="$acc" 'BEGIN { exit !(c == int(a * t + 0.5)) }' ||
  fail "predict's accuracy $correct/$total differs from the run's final test accuracy $acc"

# An image of another size: resized by default (said on stderr), refused with --no-resize.
"$FUSETRAIN_PYTHON" - "$work/images/03/$(ls "$work/images/03" | head -1)" "$work/other/big.jpg" <<'PY'
import os, sys
from PIL import Image
os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True)
Image.open(sys.argv[1]).convert("RGB").resize((40, 30)).save(sys.argv[2], quality=95)
PY
"$FT" predict -c "$model" "$work/other/big.jpg" > "$work/big.csv" 2> "$work/big.err"
grep -q "^fusetrain predict: resized 1 image to 28x28: 1 of 40x30$" "$work/big.err" ||
  fail "no resize note: $(cat "$work/big.err")"
[ "$(wc -l < "$work/big.csv")" = 2 ] || fail "stdout CSV of one image: $(cat "$work/big.csv")"
if "$FT" predict -c "$model" --no-resize "$work/other" --out "$work/refused.csv" 2> "$work/refused.err"; then
  fail "--no-resize accepted a 40x30 image"
fi
grep -q "big.jpg: image is 40x30 but the network takes 28x28" "$work/refused.err" ||
  fail "--no-resize error: $(cat "$work/refused.err")"

# A corrupt file among good ones: an error naming it, and an existing --out file left as it was.
cp -r "$work/images/05" "$work/mixed"
head -c 100 "$work/images/05/$(ls "$work/images/05" | head -1)" > "$work/mixed/zz-broken.png"
cp "$work/p.csv" "$work/keep.csv"
if "$FT" predict -c "$model" "$work/mixed" --out "$work/keep.csv" --force 2> "$work/corrupt.err"; then
  fail "a truncated PNG was accepted"
fi
grep -q "zz-broken.png: cannot decode PNG.*(--skip-bad leaves unreadable images out and lists them)" "$work/corrupt.err" ||
  fail "corrupt-file error: $(cat "$work/corrupt.err")"
cmp -s "$work/p.csv" "$work/keep.csv" || fail "a failed predict changed the existing --out file"
[ -z "$(ls "$work" | grep -e '\.partial-' -e '^refused\.csv$')" ] || fail "a failed predict left output: $(ls "$work")"
# To stdout, a bad image in the first batch stops predict before the CSV header: nothing half-written.
if "$FT" predict -c "$model" "$work/mixed/zz-broken.png" > "$work/stdout.csv" 2> /dev/null; then fail "a lone bad image was accepted"; fi
[ ! -s "$work/stdout.csv" ] || fail "a failed predict wrote to stdout: $(head -2 "$work/stdout.csv")"
# Without --force an existing --out is kept before any image is read.
if "$FT" predict -c "$model" "$work/images/05" --out "$work/keep.csv" 2> "$work/exists.err"; then fail "an existing --out was replaced"; fi
grep -q -- "--out $work/keep.csv exists and is kept: choose another path or use --force to replace it" "$work/exists.err" ||
  fail "existing --out error: $(cat "$work/exists.err")"

# --skip-bad: the good images' rows (the same as without the bad file), the bad files on stderr, status 3.
printf 'GIF89a not an image' > "$work/mixed/aa-fake.jpg"
good=$(find "$work/images/05" -name '*.png' | wc -l)
set +e
"$FT" predict -c "$model" "$work/mixed" --skip-bad --batch 16 --out "$work/skipped.csv" 2> "$work/skipped.err"
status=$?
set -e
[ "$status" = 3 ] || fail "--skip-bad exit status $status, expected 3: $(cat "$work/skipped.err")"
grep -q "^fusetrain predict: skipped: $work/mixed/aa-fake.jpg: " "$work/skipped.err" || fail "aa-fake.jpg not listed: $(cat "$work/skipped.err")"
grep -q "^fusetrain predict: skipped: $work/mixed/zz-broken.png: cannot decode PNG" "$work/skipped.err" ||
  fail "zz-broken.png not listed: $(cat "$work/skipped.err")"
grep -q "^fusetrain predict: 2 of $((good + 2)) images could not be read and were left out (listed above); the CSV holds the other $good (exit status 3)$" \
  "$work/skipped.err" || fail "no summary of the skipped images: $(cat "$work/skipped.err")"
"$FT" predict -c "$model" "$work/images/05" --out "$work/good.csv"
diff <(sed 's|/mixed/|/|' "$work/skipped.csv") <(sed 's|/images/05/|/|' "$work/good.csv") > /dev/null ||
  fail "--skip-bad rows differ from the good images' own rows"

# --top 3: three classes per row, probabilities descending and summing to at most 1; what a folder holds
# besides images is reported.
echo "not an image" > "$work/images/01/notes.txt"
"$FT" predict -c "$model" --top 3 --batch 7 "$work/images/01" --out "$work/top3.csv" 2> "$work/top3.err"
grep -q "skipped 1 folder entry that is hidden or not .jpg/.jpeg/.png (first: $work/images/01/notes.txt)" \
  "$work/top3.err" || fail "no note of the skipped file: $(cat "$work/top3.err")"
head -1 "$work/top3.csv" | grep -qx "path,class1,prob1,class2,prob2,class3,prob3" || fail "top-3 header"
awk -F, 'NR > 1 { n++; if (NF != 7 || $3 < $5 || $5 < $7 || $3 + $5 + $7 > 1.000002 || $2 == $4 || $4 == $6) bad++ }
  END { exit !(n > 100 && bad == 0) }' "$work/top3.csv" || fail "top-3 rows malformed: $(head -3 "$work/top3.csv")"

# Usage and input errors exit non-zero and name what is wrong.
expect_error() {  # expect_error PATTERN ARGS...
  local pattern=$1; shift
  if "$FT" predict "$@" > /dev/null 2> "$work/err.txt"; then fail "predict $* succeeded"; fi
  grep -q -- "$pattern" "$work/err.txt" || fail "predict $*: expected '$pattern', got: $(cat "$work/err.txt")"
}
expect_error "--top must be at least 1" -c "$model" --top 0 "$work/images/01"
expect_error "$work/nowhere.png: no such file or folder" -c "$model" "$work/nowhere.png"
echo "not a model" > "$work/bad.model"
expect_error "$work/bad.model" -c "$work/bad.model" "$work/images/01"
echo "PASS"
