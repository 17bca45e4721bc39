#!/usr/bin/env bash
# Pre-emption on a real (private) SLURM cluster: SIGUSR1 to a running jobs/slurm/train.sbatch (as with
# --signal=B:USR1@120) must checkpoint the ranks (exit 75), requeue the job, resume it and finish.
set -euo pipefail
: "${FUSETRAIN_BIN_DIR:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_TMP:?}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=local_cluster.sh
source "$here/local_cluster.sh"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
for tool in sbatch scontrol; do command -v "$tool" > /dev/null || { echo "SKIP: $tool not found"; exit 77; }; done
bin=$FUSETRAIN_BIN_DIR/fusetrain
work=$FUSETRAIN_TMP/preemption
rm -rf "$work" && mkdir -p "$work"

"$FUSETRAIN_BIN_DIR/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 2 --limit 4000 \
  > "$work/prep.log"
write_config() {  # name epochs training-images
  cat > "$work/$1.yaml" <<YAML
model: {name: simple_cnn, dropout: 0.1}
data: {path: $work/data, batch_size: 32, limit_train: $3, limit_test: 500}
optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
train: {epochs: $2, seed: 1, device: cpu, threads: 1}
distributed: {stall_timeout_s: 120}
output: {dir: $work/runs, name: $1}
YAML
}

# Probe, without SLURM: does this fusetrain checkpoint and exit 75 on SIGUSR1?
write_config probe 1000 256
"$bin" train --config "$work/probe.yaml" > "$work/probe.log" 2>&1 &
probe=$!
for _ in $(seq 120); do grep -q "^epoch " "$work/probe.log" && break; sleep 0.5; done
kill -USR1 "$probe" 2>/dev/null || true
status=0; wait "$probe" || status=$?
if [ "$status" -ne 75 ] || [ ! -f "$work/runs/probe.ckpt" ]; then
  echo "SKIP: fusetrain train does not checkpoint on SIGUSR1 yet (exit status $status, no runs/probe.ckpt);"
  echo "      this case runs once train exits 75 after writing output.dir/<name>.ckpt and resumes from it"
  exit 77
fi

finish() {
  cluster_report_failure $? "$work"
  cluster_stop
}
trap finish EXIT
cluster_start "$work/cluster"

# Configured for so many epochs that no host finishes before the signal lands (4 epochs of 31 steps could on a
# fast one); once it has checkpointed, the config is cut to one epoch past the stop for the requeued run
# (train.epochs may change on resume).
write_config preempt 1000 2000
job=$(CONFIG=$work/preempt.yaml FUSETRAIN_BIN=$bin LAUNCHER=$FT_LAUNCHER \
  sbatch --parsable --ntasks-per-node=2 --gpus-per-node=0 --cpus-per-task=1 --output="$work/preempt.out" \
  "$FUSETRAIN_SOURCE/jobs/slurm/train.sbatch")
echo "submitted train.sbatch as job $job"
log=$work/preempt.out
cluster_await "$job" 300 "$log" "^epoch   1/1000" || { echo "FAIL: the job never finished epoch 1"; exit 1; }

# What SLURM does 120 s before the time limit with --signal=B:USR1@120: signal the batch shell only.
scancel --batch --signal=USR1 "$job"
echo "sent SIGUSR1 to the batch script of job $job"
cluster_await "$job" 120 "$log" "checkpointed \(exit 75\); requeueing" || { echo "FAIL: no checkpoint and requeue"; exit 1; }
stopped=$(sed -n 's/^stopped by signal at epoch \([0-9]*\),.*/\1/p' "$log" | head -n 1)
[ -n "$stopped" ] || { echo "FAIL: no 'stopped by signal at epoch E' line"; exit 1; }
epochs=$((stopped + 1))
write_config preempt "$epochs" 2000
cluster_release "$job"

cluster_wait "$job" 600
scontrol show job "$job" -o | grep -q "JobState=COMPLETED" || { echo "FAIL: job $job did not complete"; exit 1; }
scontrol show job "$job" -o | grep -q "Restarts=1" || { echo "FAIL: job $job was not restarted once"; exit 1; }
grep -q "restart 1" "$log"
grep -q "resuming from $work/runs/preempt.ckpt" "$log" || { echo "FAIL: the restarted job did not resume"; exit 1; }
# Epoch 1 finished before the signal, so the resumed run must not train it again.
[ "$(grep -c "^epoch   1/" "$log")" -eq 1 ] || { echo "FAIL: epoch 1 was trained twice"; exit 1; }
"$bin" report --csv "$work/runs/preempt.h5" | tee "$work/report.csv"
awk -F, -v n="$epochs" 'NR == 2 && $8 == n { ok = 1 } END { exit !ok }' "$work/report.csv" ||
  { echo "FAIL: not $epochs epochs"; exit 1; }
echo "PASS"
