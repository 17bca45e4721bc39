#!/usr/bin/env bash
# fusetrain evaluate on real Fashion-MNIST: a 2-rank run's final model scores exactly the final test accuracy the
# run printed and stored, alone and under mpirun; the confusion matrix, logits, report --confusion; bad inputs
# fail with their messages and leave no evaluation file.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
work=$FUSETRAIN_TMP/evaluate
rm -rf "$work" && mkdir -p "$work"
FT=$FUSETRAIN_BIN/fusetrain
fail() { echo "FAIL: $*"; exit 1; }

"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 1 --limit 3000 >/dev/null
cat > "$work/run.yaml" <<YAML
model: {name: simple_cnn, dropout: 0.1}
data: {path: $work/data, batch_size: 64, limit_test: 1000}
optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
train: {epochs: 1, seed: 1, device: cpu}
distributed: {backend: mpi, stall_timeout_s: 60}
output: {dir: $work/runs, name: fm}
YAML
$FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$work/run.yaml" > "$work/train.log"
model=$work/runs/fm.model
[ -f "$model" ] || fail "training wrote no $model"
trained=$(sed -n 's/^done: .*final test acc \([0-9.]*\)%.*/\1/p' "$work/train.log")

# Alone: the accuracy the run printed, to its 2 decimals, and the stored one to 1e-9; the default output beside
# the model, its 10x10 matrix summing to the 1000 test images (data.limit_test).
"$FT" evaluate --checkpoint "$model" --device cpu --logits 5 | tee "$work/eval.log"
line=$(grep '^evaluate: ' "$work/eval.log")
[[ $line == "evaluate: test accuracy $trained% (top-5 "*"%), loss "*" over 1000 images" ]] ||
  fail "evaluate printed '$line', the run's final test accuracy is $trained%"
out=$work/runs/fm-eval-test.h5
stored=$("$FT" inspect "$work/runs/fm.h5" /summary/final_test_acc)
top1=$("$FT" inspect "$out" /evaluation/top1)
awk -v a="$stored" -v b="$top1" 'BEGIN { exit !(a - b < 1e-9 && b - a < 1e-9) }' ||
  fail "top1 $top1 differs from the results file's final_test_acc $stored"
# Its mean loss is the run's final test loss (the same images, summed in another order), and it names the
# model file and the data folder it read, each in its own field.
stored_loss=$("$FT" inspect "$work/runs/fm.h5" /summary/final_test_loss)
loss=$("$FT" inspect "$out" /evaluation/loss)
awk -v a="$stored_loss" -v b="$loss" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-5 * a) }' ||
  fail "loss $loss differs from the results file's final_test_loss $stored_loss"
[ "$("$FT" inspect "$out" /evaluation/checkpoint)" = "$model" ] || fail "/evaluation/checkpoint is not $model"
[ "$("$FT" inspect "$out" /evaluation/data)" = "$work/data" ] || fail "/evaluation/data is not $work/data"
"$FT" inspect "$out" | grep -q '^/evaluation/confusion \[10, 10\]$' || fail "the confusion matrix is not 10x10"
[ "$("$FT" inspect "$out" /evaluation/confusion | awk '{ s += $1 } END { print s }')" = 1000 ] ||
  fail "the confusion matrix does not sum to the 1000 test images"
# --logits 5: the first five test labels of the split, in order.
[ "$("$FT" inspect "$out" /evaluation/labels | paste -sd,)" = \
  "$("$FT" inspect "$work/data/test-00000-of-00001.h5" /labels | head -n 5 | paste -sd,)" ] ||
  fail "the logits' labels are not the split's first five"
"$FT" inspect "$out" | grep -q '^/evaluation/logits \[5, 10\]$' || fail "no 5x10 logits"

# Two ranks, each on its half: the same accuracy, and logits gathered across the slice boundary (500) in order.
$FUSETRAIN_MPIRUN -np 2 "$FT" evaluate --checkpoint "$model" --device cpu --logits 600 --out "$work/np2.h5" \
  > "$work/eval2.log"
grep -q "^evaluate: test accuracy $trained% " "$work/eval2.log" || fail "2 ranks: $(grep '^evaluate' "$work/eval2.log")"
[ "$("$FT" inspect "$work/np2.h5" /evaluation/labels | md5sum)" = \
  "$("$FT" inspect "$work/data/test-00000-of-00001.h5" /labels | head -n 600 | md5sum)" ] ||
  fail "2 ranks: the labels of the kept logits are not the split's first 600 in order"

# An existing --out: kept without --force (the refusal names both), replaced with it.
kept=$(md5sum < "$work/np2.h5")
if "$FT" evaluate --checkpoint "$model" --device cpu --out "$work/np2.h5" > "$work/exists.log" 2>&1; then
  fail "evaluate replaced an existing --out without --force"
fi
grep -qF -- "--out $work/np2.h5 exists and is kept: choose another path or use --force to replace it" \
  "$work/exists.log" || fail "unclear refusal of an existing --out: $(cat "$work/exists.log")"
[ "$(md5sum < "$work/np2.h5")" = "$kept" ] || fail "the refused evaluation changed $work/np2.h5"
"$FT" evaluate --checkpoint "$model" --device cpu --logits 5 --out "$work/np2.h5" --force > "$work/forced.log" ||
  fail "--force did not replace an existing --out"
"$FT" inspect "$work/np2.h5" | grep -q '^/evaluation/logits \[5, 10\]$' || fail "--force kept the old evaluation file"
"$FT" report --confusion "$out" | tee "$work/confusion.md"
classes='T-shirt/top | Trouser | Pullover | Dress | Coat | Sandal | Shirt | Sneaker | Bag | Ankle boot'
grep -qxF "| true \ predicted | $classes | total |" "$work/confusion.md" || fail "report --confusion lacks the header with class names"
[ "$(grep -cE '^\| [A-Za-z][^|]* \| [0-9]+ \|' "$work/confusion.md")" = 10 ] || fail "report --confusion: not 10 rows"

# Bad input: a named error, a non-zero exit, no evaluation file.
bad() {  # bad MESSAGE ARGS...: evaluate must fail saying MESSAGE
  local message=$1
  shift
  local status=0
  "$FT" evaluate --device cpu --out "$work/bad.h5" "$@" > "$work/bad.log" 2>&1 || status=$?
  [ "$status" -ne 0 ] || fail "evaluate $* succeeded"
  grep -qF -- "$message" "$work/bad.log" || fail "evaluate $*: expected '$message', got: $(cat "$work/bad.log")"
  [ ! -e "$work/bad.h5" ] || fail "evaluate $* left $work/bad.h5"
}
"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data32" --limit 100 --resize 32 >/dev/null
bad "takes 28x28x1 images of 10 classes but data $work/data32 holds 32x32x1" --checkpoint "$model" --data "$work/data32"
head -c 20000 "$model" > "$work/cut.model"
bad "$work/cut.model is damaged (no checksum: the file is truncated" --checkpoint "$work/cut.model"
bad "is not a fusetrain model file or checkpoint (not a LibTorch archive)" --checkpoint "$work/data/test-00000-of-00001.h5"
bad "--split 'validation' is not a split" --checkpoint "$model" --split validation
sed 's/dropout: 0.1/dropout: 0.3/' "$work/run.yaml" > "$work/other.yaml"
bad "model.dropout: 0.1 in the model, 0.3 in --config" --checkpoint "$model" --config "$work/other.yaml"
echo "PASS"
