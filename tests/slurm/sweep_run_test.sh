#!/usr/bin/env bash
# `fusetrain sweep --run` on real Fashion-MNIST: two points (1 and 2 ranks) train one after the other, the
# report table lists both, a second --run resumes by skipping them, and summary.py makes its page.
set -euo pipefail
: "${FUSETRAIN_BIN_DIR:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}" "${FUSETRAIN_PYTHON:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
bin=$FUSETRAIN_BIN_DIR/fusetrain
work=$FUSETRAIN_TMP/sweep_run
rm -rf "$work" && mkdir -p "$work"

"$FUSETRAIN_BIN_DIR/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 2 --limit 4000 \
  > "$work/prep.log"
cat > "$work/tiny.yaml" <<YAML
model: {name: simple_cnn, dropout: 0.1}
data: {path: $work/data, batch_size: 64, limit_train: 2000, limit_test: 1000}
optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
train: {epochs: 1, seed: 1, device: cpu, threads: 1}
sweep:
  grid:
    ranks: [1, 2]
YAML

"$bin" sweep "$work/tiny.yaml" --out "$work/sweep" --run --mpirun "$FUSETRAIN_MPIRUN" | tee "$work/run.log"
grep -q "^\[1/2\] p000-ranks=1: training on 1 rank(s)" "$work/run.log"
grep -q "^\[2/2\] p001-ranks=2: done in" "$work/run.log"
grep -q "^| p000-ranks=1 | simple_cnn | fashion-mnist | 1 | mpi | 64 |" "$work/run.log"
grep -q "^| p001-ranks=2 | simple_cnn | fashion-mnist | 2 | mpi | 64 (global 128) |" "$work/run.log"
grep -q "^epoch   1/1" "$work/sweep/logs/p001-ranks=2.log"

"$bin" sweep "$work/tiny.yaml" --out "$work/sweep" --run --mpirun "$FUSETRAIN_MPIRUN" | tee "$work/rerun.log"
[ "$(grep -c ": done earlier" "$work/rerun.log")" -eq 2 ] || { echo "FAIL: the second --run trained again"; exit 1; }

"$FUSETRAIN_PYTHON" "$FUSETRAIN_SOURCE/tools/report/summary.py" --fusetrain "$bin" "$work/sweep"
for f in summary.md summary.html sweep-curves.png sweep-time.png p000-ranks=1-curves.png p001-ranks=2-time.png; do
  [ -s "$work/sweep/report/$f" ] || { echo "FAIL: $work/sweep/report/$f missing"; exit 1; }
done
grep -q "p001-ranks=2" "$work/sweep/report/summary.html"
echo "PASS"
