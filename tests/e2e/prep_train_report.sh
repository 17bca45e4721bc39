#!/usr/bin/env bash
# prep -> train (2 MPI ranks) -> results file -> report, on real Fashion-MNIST: checks that the shards,
# the results file (readable by fusetrain inspect) and the report exist and that the network learned.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
work=$FUSETRAIN_TMP/prep_train_report
rm -rf "$work" && mkdir -p "$work"

"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 2 --limit 8000
ls "$work/data/train-00000-of-00002.h5" "$work/data/train-00001-of-00002.h5" "$work/data/test-00001-of-00002.h5"

cat > "$work/run.yaml" <<YAML
model: {name: simple_cnn, dropout: 0.1}
data: {path: $work/data, batch_size: 64, limit_test: 2000}
optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
train: {epochs: 2, seed: 1}
distributed: {backend: mpi, stall_timeout_s: 30, timeline: $work/timeline.json}
output: {dir: $work/runs, name: e2e}
YAML
$FUSETRAIN_MPIRUN -np 2 "$FUSETRAIN_BIN/fusetrain" train --config "$work/run.yaml" | tee "$work/train.log"
grep -q "epoch   2/2" "$work/train.log"
grep -q "results: $work/runs/e2e.h5" "$work/train.log"

# The timeline is valid Chrome-trace JSON with per-bucket and per-step phases from both ranks.
python3 - "$work/timeline.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["name"].split(" ")[0] for e in events if e.get("ph") == "X"}
ranks = {e["pid"] for e in events if e.get("ph") == "X"}
missing = {"forward", "backward", "optimizer", "pack", "queue", "allreduce", "unpack"} - names
assert not missing, f"timeline lacks phases {missing}"
assert ranks == {0, 1}, f"timeline ranks {ranks}"
print(f"timeline: {len(events)} events, phases {sorted(names)}")
PY
"$FUSETRAIN_BIN/fusetrain" inspect "$work/runs/e2e.h5" /summary/final_test_acc | grep -qE '^0\.[0-9]+'
[ "$("$FUSETRAIN_BIN/fusetrain" inspect "$work/runs/e2e.h5" /epochs/test_acc | wc -l)" -ge 1 ]
"$FUSETRAIN_BIN/fusetrain" report "$work/runs/e2e.h5" | tee "$work/report.md"
grep -q "| e2e | simple_cnn | fashion-mnist | 2 | mpi | 64 |" "$work/report.md"
acc=$("$FUSETRAIN_BIN/fusetrain" report --csv "$work/runs/e2e.h5" | awk -F, 'NR==2 {print $12}')
echo "final test accuracy: $acc%"
awk -v a="$acc" 'BEGIN { exit !(a >= 80.0) }' || { echo "FAIL: accuracy $acc% below 80%"; exit 1; }
echo "PASS"
