#!/usr/bin/env bash
# Fault test: 3 ranks train; mid-run rank 1 is killed (SIGKILL) or stopped (SIGSTOP, a hung node).
# The job must end non-zero within the stall timeout plus slack, and the output must name rank 1.
# The gradient backend is FUSETRAIN_BACKEND (mpi by default, or gloo).
set -euo pipefail
fault=${1:?usage: fault_rank.sh kill|stop}
backend=${FUSETRAIN_BACKEND:-mpi}
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
stall=8
work=$FUSETRAIN_TMP
rm -rf "$work" && mkdir -p "$work"
"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 3 --limit 3000 >/dev/null
cat > "$work/run.yaml" <<YAML
model: {name: simple_cnn}
data: {path: $work/data, batch_size: 16}
train: {epochs: 200, threads: 1}
distributed: {backend: $backend, stall_timeout_s: $stall}
output: {dir: $work/runs, name: fault}
YAML

$FUSETRAIN_MPIRUN -np 3 "$FUSETRAIN_BIN/fusetrain" train --config "$work/run.yaml" > "$work/log" 2>&1 &
launcher=$!
cleanup() {
  for p in $(pgrep -f "$work/run.yaml" || true); do kill -CONT "$p" 2>/dev/null || true; kill -9 "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

for _ in $(seq 1 240); do
  grep -q "epoch   1/" "$work/log" && break
  kill -0 "$launcher" 2>/dev/null || { cat "$work/log"; echo "FAIL: training ended before the fault"; exit 1; }
  sleep 0.5
done
grep -q "epoch   1/" "$work/log" || { cat "$work/log"; echo "FAIL: no epoch finished in 120 s"; exit 1; }

victim=""
for p in $(pgrep -f "fusetrain train --config $work/run.yaml"); do
  if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -x "OMPI_COMM_WORLD_RANK=1" > /dev/null; then victim=$p; fi
done
[ -n "$victim" ] || { echo "FAIL: rank 1 not found"; exit 1; }
sleep 0.3  # land inside the next epoch's steps
start=$(date +%s.%N)
if [ "$fault" = kill ]; then kill -9 "$victim"; else kill -STOP "$victim"; fi

status=0
limit=$((stall + 60))
for _ in $(seq 1 $((limit * 10))); do
  kill -0 "$launcher" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$launcher" 2>/dev/null; then
  cat "$work/log"; echo "FAIL: job still running ${limit} s after rank 1 was ${fault}ed (hang)"; exit 1
fi
wait "$launcher" || status=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
cat "$work/log" | tail -n 15
echo "rank 1 ${fault} ($backend): job exited with status $status after ${elapsed} s (stall timeout ${stall} s)"
[ "$status" -ne 0 ] || { echo "FAIL: exit status 0 after a rank died"; exit 1; }
grep -Eq "rank 1\b|rank 1 |rank 1\)" "$work/log" || { echo "FAIL: output does not name rank 1"; exit 1; }
awk -v e="$elapsed" -v s="$stall" 'BEGIN { exit !(e <= s + 20) }' || { echo "FAIL: took ${elapsed} s"; exit 1; }
echo "PASS"
