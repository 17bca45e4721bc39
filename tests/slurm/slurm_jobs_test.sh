#!/usr/bin/env bash
# The job scripts on a real (private, one-node) SLURM cluster: train.sbatch and multinode.sbatch (on its one
# node) train Fashion-MNIST on 2 ranks, a `fusetrain sweep` array runs 1 and 2 ranks; `fusetrain report` checks.
set -euo pipefail
: "${FUSETRAIN_BIN_DIR:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_TMP:?}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=local_cluster.sh
source "$here/local_cluster.sh"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
bin=$FUSETRAIN_BIN_DIR/fusetrain
work=$FUSETRAIN_TMP/jobs
rm -rf "$work" && mkdir -p "$work"

finish() {
  local status=$?
  if [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then
    echo "--- job logs and daemon logs (test failed with status $status)"
    tail -n 30 "$work"/*.out "$work"/sweep/logs/*.out "$work"/cluster/log/*.log 2>/dev/null || true
  fi
  cluster_stop
}
trap finish EXIT
cluster_start "$work/cluster"

"$FUSETRAIN_BIN_DIR/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 2 --limit 4000 \
  > "$work/prep.log"
cat > "$work/tiny.yaml" <<YAML
model: {name: simple_cnn, dropout: 0.1}
data: {path: $work/data, batch_size: 64, limit_train: 2000, limit_test: 1000}
optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
train: {epochs: 1, seed: 1, device: cpu, threads: 1}
distributed: {stall_timeout_s: 120}
output: {dir: $work/runs}
YAML
{ cat "$work/tiny.yaml"; echo "sweep: {grid: {ranks: [1, 2]}}"; } > "$work/tiny_sweep.yaml"

# One run on two ranks; the config names no output.name, so the script names it <stem>-<job id>.
train_job=$(CONFIG=$work/tiny.yaml FUSETRAIN_BIN=$bin LAUNCHER=$FT_LAUNCHER \
  sbatch --parsable --ntasks-per-node=2 --gpus-per-node=0 --cpus-per-task=1 --output="$work/train-%j.out" \
  "$FUSETRAIN_SOURCE/jobs/slurm/train.sbatch")
echo "submitted train.sbatch as job $train_job"

# The multi-node script on the only node there is: its per-node check and its named run.
multi_job=$(CONFIG=$work/tiny.yaml FUSETRAIN_BIN=$bin LAUNCHER=$FT_LAUNCHER RUN_NAME=multi \
  sbatch --parsable --nodes=1 --ntasks-per-node=2 --gpus-per-node=0 --cpus-per-task=1 --output="$work/multi-%j.out" \
  "$FUSETRAIN_SOURCE/jobs/slurm/multinode.sbatch")
echo "submitted multinode.sbatch as job $multi_job"

"$bin" sweep "$work/tiny_sweep.yaml" --out "$work/sweep"
grep -q '^#SBATCH --array=0-1$' "$work/sweep/sweep.sbatch"
grep -q '^#SBATCH --ntasks=2$' "$work/sweep/sweep.sbatch"
sweep_job=$(LAUNCHER=$FT_LAUNCHER sbatch --parsable "$work/sweep/sweep.sbatch")
echo "submitted the sweep array as job $sweep_job"

cluster_wait "$train_job" 600
cluster_wait "$multi_job" 600
cluster_wait "$sweep_job" 600
for job in "$train_job" "$multi_job" "$sweep_job"; do
  states=$(scontrol show job "$job" -o | grep -o 'JobState=[A-Z_]*' | sort -u | tr '\n' ' ')
  [ "$states" = "JobState=COMPLETED " ] || { echo "FAIL: job $job ended as $states"; exit 1; }
done
grep -q "point p001-ranks=2 on 2 rank(s)" "$work"/sweep/logs/slurm-"$sweep_job"_1.out

"$bin" report "$work/runs/tiny-$train_job.h5" "$work/runs/multi.h5" "$work"/sweep/results/*.h5 | tee "$work/report.md"
grep -q "| tiny-$train_job | simple_cnn | fashion-mnist | 2 | mpi | 64 (global 128) |" "$work/report.md"
grep -q "| multi | simple_cnn | fashion-mnist | 2 | mpi | 64 (global 128) |" "$work/report.md"
grep -q "| p000-ranks=1 | simple_cnn | fashion-mnist | 1 | mpi | 64 |" "$work/report.md"
grep -q "| p001-ranks=2 | simple_cnn | fashion-mnist | 2 | mpi | 64 (global 128) |" "$work/report.md"
echo "PASS"
