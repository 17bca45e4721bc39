#!/usr/bin/env bash
# prep -> train (2 MPI ranks) -> results file -> report on real Fashion-MNIST: the shards, the results file read
# back against the log, the report with per-rank rows and model summary, and a network that learned.
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
train: {epochs: 2, seed: 1, device: cpu}
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
# Each rank's tracks (compute, engine, comm) are threads 0, 1, ... of its process, each named once, and
# every phase sits on a named thread: pack on the engine's, all-reduce on the communication track's.
threads = {}
for e in events:
    if e.get("name") == "thread_name":
        assert (e["pid"], e["tid"]) not in threads, f"thread {e['pid']}/{e['tid']} named twice"
        threads[(e["pid"], e["tid"])] = e["args"]["name"]
for rank in (0, 1):
    tids = sorted(t for p, t in threads if p == rank)
    assert tids == list(range(len(tids))) and len(tids) >= 3, f"rank {rank} threads {tids}"
    assert len({threads[(rank, t)] for t in tids}) == len(tids), f"rank {rank}: a track named twice"
track = {(e["pid"], e["name"].split(" ")[0]): threads.get((e["pid"], e["tid"])) for e in events if e.get("ph") == "X"}
for rank in (0, 1):
    assert track[(rank, "pack")] == "engine" and track[(rank, "allreduce")] == "comm", f"rank {rank} tracks {track}"
print(f"timeline: {len(events)} events, phases {sorted(names)}")
PY
# Every column the log prints, read back from the results file by its name: each epoch's global line
# against /epochs, each rank's line against /rank_epochs, the closing line against /summary. The log rounds
# (losses to 4 decimals, accuracies to 2 decimals of a percent, lr to 5): a column holding another field's
# values, a missing row or a NaN fails.
python3 - "$FUSETRAIN_BIN/fusetrain" "$work/runs/e2e.h5" "$work/train.log" <<'PY'
import math, re, subprocess, sys
fusetrain, results, log = sys.argv[1:]
text = open(log).read()
def column(path):
    out = subprocess.run([fusetrain, "inspect", results, path], check=True, capture_output=True, text=True).stdout
    return [float(v) for v in out.split()]
def same(what, stored, printed, step):
    assert math.isfinite(stored) and abs(stored - printed) <= step / 2 + 1e-9, \
        f"{what}: the results file holds {stored}, the log printed {printed}"
epochs = re.findall(r"^epoch +(\d+)/\d+  train loss ([\d.]+) acc +([\d.]+)%  test loss ([\d.]+) acc +([\d.]+)%"
                    r"  lr ([\d.]+)", text, re.M)
assert len(epochs) == 2, f"{len(epochs)} evaluated epoch lines in the log"
names = ("epoch", "evaluated", "train_loss", "train_acc", "test_loss", "test_acc", "lr")
stored = {c: column(f"/epochs/{c}") for c in names}
for c, values in stored.items():
    assert len(values) == len(epochs), f"/epochs/{c} has {len(values)} rows for {len(epochs)} epochs"
for row, (epoch, train_loss, train_acc, test_loss, test_acc, lr) in enumerate(epochs):
    at = f"epoch {epoch}"
    assert stored["epoch"][row] == int(epoch) and stored["evaluated"][row] == 1, f"{at}: epoch or evaluated column"
    same(f"{at} /epochs/train_loss", stored["train_loss"][row], float(train_loss), 1e-4)
    same(f"{at} /epochs/train_acc", 100 * stored["train_acc"][row], float(train_acc), 1e-2)
    same(f"{at} /epochs/test_loss", stored["test_loss"][row], float(test_loss), 1e-4)
    same(f"{at} /epochs/test_acc", 100 * stored["test_acc"][row], float(test_acc), 1e-2)
    same(f"{at} /epochs/lr", stored["lr"][row], float(lr), 1e-5)
ranks = re.findall(r"^Rank (\d+), Epoch \[(\d+)/\d+\], Train Loss: ([\d.]+), Train Acc: ([\d.]+)%, "
                   r"Test Loss: ([\d.]+), Test Acc: ([\d.]+)%", text, re.M)
assert len(ranks) == 4, f"{len(ranks)} rank lines in the log (2 ranks x 2 epochs)"
cols = ("rank", "epoch", "train_loss", "train_acc", "test_loss", "test_acc")
table = {c: column(f"/rank_epochs/{c}") for c in cols}
rows = {(int(r), int(e)): i for i, (r, e) in enumerate(zip(table["rank"], table["epoch"]))}
assert len(rows) == 4 == len(table["train_loss"]), f"/rank_epochs rows {sorted(rows)}"
for rank, epoch, *printed in ranks:
    i = rows[(int(rank), int(epoch))]
    for c, value, step, scale in zip(cols[2:], printed, (1e-4, 1e-2, 1e-4, 1e-2), (1, 100, 1, 100)):
        same(f"rank {rank} epoch {epoch} /rank_epochs/{c}", scale * table[c][i], float(value), step)
final = re.search(r"final test acc ([\d.]+)%, best ([\d.]+)%", text)
assert final, "no closing line"
same("/summary/final_test_acc", 100 * column("/summary/final_test_acc")[0], float(final.group(1)), 1e-2)
same("/summary/best_test_acc", 100 * column("/summary/best_test_acc")[0], float(final.group(2)), 1e-2)
print("results file: every printed epoch, rank and summary figure read back under its own name")
PY
"$FUSETRAIN_BIN/fusetrain" report "$work/runs/e2e.h5" | tee "$work/report.md"
grep -q "| e2e | simple_cnn | fashion-mnist | 2 | mpi | 64 (global 128) |" "$work/report.md"
acc=$("$FUSETRAIN_BIN/fusetrain" report --csv "$work/runs/e2e.h5" | awk -F, 'NR==1 {for (i = 1; i <= NF; i++) if ($i == "final_acc_%") c = i} NR==2 {print $c}')
echo "final test accuracy: $acc%"
# The model summary: printed at start, stored in the results file; per-rank rows with each rank's own
# training accuracy on its slice (both ranks learned).
grep -q "^| conv1 | 32x28x28 | 320 |" "$work/train.log"
"$FUSETRAIN_BIN/fusetrain" report --model "$work/runs/e2e.h5" | grep -q "^| fc2 | 10 | 2570 |"
# Bounds (tests/README.md, "Thresholds"): the run is bit-for-bit deterministic on one CPU, but oneDNN and
# ATen pick other kernels per instruction set, and the trajectory moves by tenths of a percent between CPUs.
# Per-rank train accuracy: measured 77.2-77.4% (default ISA); bound 50%, far above chance (10%).
"$FUSETRAIN_BIN/fusetrain" report --per-rank "$work/runs/e2e.h5"
"$FUSETRAIN_BIN/fusetrain" report --per-rank --csv "$work/runs/e2e.h5" |
  awk -F, 'NR==1 {for (i = 1; i <= NF; i++) if ($i == "train_acc_%") c = i} NR>1 && $c > 50 {n++} END {exit n != 2}' ||
  { echo "FAIL: per-rank train accuracy missing or low"; exit 1; }
# Final test accuracy: measured 79.75-80.60% over default, AVX2 and AVX512 ISAs, a busy core and another
# x86-64 host (79.75% there); bound 77%: 2.75 points under the lowest, 3x the spread seen between settings.
awk -v a="$acc" 'BEGIN { exit !(a >= 77.0) }' || { echo "FAIL: accuracy $acc% below 77%"; exit 1; }
echo "PASS"
