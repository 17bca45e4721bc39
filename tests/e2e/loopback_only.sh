#!/usr/bin/env bash
# A run on one machine through the workstation script (as `make demo` runs it) listens on loopback only: `ss`
# polled during a 2-rank run sees mpirun's listeners, each on 127.0.0.1 or ::1, and no rank or launcher
# socket on another address. The control, FUSETRAIN_LOOPBACK_ONLY=0, must show mpirun on every interface.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_TMP:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
command -v ss > /dev/null || { echo "SKIP: no ss (iproute2) to list the listening sockets"; exit 77; }
work=$FUSETRAIN_TMP/loopback_only
rm -rf "$work" && mkdir -p "$work"
"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 2 --limit 2000 > /dev/null
cat > "$work/run.yaml" <<YAML
model: {name: simple_cnn}
data: {path: $work/data, batch_size: 32, limit_test: 200}
train: {epochs: 3, threads: 1, device: cpu}
distributed: {backend: gloo, stall_timeout_s: 30}
output: {dir: $work/runs, tensorboard: false, save_model: false}
YAML

# listeners RUN LOOPBACK_ONLY: runs the workstation script with FUSETRAIN_LOOPBACK_ONLY=LOOPBACK_ONLY and writes
# "COMMAND ADDRESS" for every listening TCP socket of its launcher and ranks seen while it ran to RUN.listeners.
listeners() {
  local run=$1 pids
  : > "$work/$run.listeners"
  FUSETRAIN_LOOPBACK_ONLY=$2 CONFIG=$work/run.yaml NP=2 FUSETRAIN_BIN=$FUSETRAIN_BIN/fusetrain RUN_NAME=$run \
    bash "$FUSETRAIN_SOURCE/jobs/workstation/run.sh" > "$work/$run.log" 2>&1 &
  local job=$!
  while kill -0 "$job" 2> /dev/null; do
    pids=$(pgrep -f -- "--set output.name=$run" | paste -sd '|' -) || true
    if [ -n "$pids" ]; then
      ss -Hltnp | awk -v pids="^($pids)\$" '{ if (match($0, /users:\(\("[^"]*",pid=[0-9]+/)) {
        split(substr($0, RSTART + 9, RLENGTH - 9), f, "\",pid="); if (f[2] ~ pids) print f[1], $4 } }' \
        >> "$work/$run.listeners"
    fi
    sleep 0.2
  done
  wait "$job" || { echo "FAIL [$run]: the run failed:"; tail -n 20 "$work/$run.log"; exit 1; }
  sort -u -o "$work/$run.listeners" "$work/$run.listeners"
}

listeners local 1
echo "listening during the run: $(paste -sd ';' "$work/local.listeners")"
grep -q '^mpirun ' "$work/local.listeners" || { echo "FAIL [local]: never saw mpirun listen (nothing checked)"; exit 1; }
if grep -Ev ' (127\.0\.0\.1|\[::1\]):[0-9]+$' "$work/local.listeners"; then
  echo "FAIL [local]: the sockets above listen beyond loopback"
  exit 1
fi
echo "PASS [local]: every listener of the launcher and the ranks is on loopback"

listeners control 0
grep -Eq '^mpirun (0\.0\.0\.0|\*|\[::\]):[0-9]+$' "$work/control.listeners" ||
  { echo "FAIL [control]: without the preload mpirun should listen on every interface:"; cat "$work/control.listeners"; exit 1; }
echo "PASS [control]: without it mpirun listens on every interface ($(grep -Ec '^mpirun (0\.0\.0\.0|\*|\[::\])' "$work/control.listeners") sockets)"
