#!/usr/bin/env bash
# The job scripts on a real (private, one-node) SLURM cluster: train.sbatch and multinode.sbatch (on its one
# node) train Fashion-MNIST on 2 ranks, a `fusetrain sweep` array runs 1 and 2 ranks; `fusetrain report` checks.
# multinode.sbatch launches again a step whose ranks failed before their MPI world formed, and only such a one,
# at most START_ATTEMPTS times: a stand-in launcher fails once, always, or after the world formed.
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

# stand-in.sh MODE: a launcher that counts its launches in MODE.count and then, by MODE: once: fails the
# first (exit 139, as a rank that died inside MPI_Init), then starts the ranks and keeps the world-formed
# file their rank 0 wrote as once.started; always: fails every one;
# formed: writes the world-formed file, as rank 0 does, and fails (exit 1).
cat > "$work/stand-in.sh" <<'SH'
#!/usr/bin/env bash
mode=$1; shift
echo x >> "$STAND_IN_DIR/$mode.count"
case $mode in
  once)
    [ "$(wc -l < "$STAND_IN_DIR/$mode.count")" -gt 1 ] || exit 139
    status=0; $FT_LAUNCHER "$@" || status=$?
    cp "$FUSETRAIN_STARTED_FILE" "$STAND_IN_DIR/once.started" || true  # what rank 0 left, before the script removes it
    exit "$status" ;;
  always) exit 139 ;;
  formed) echo "MPI world of 2 rank(s) formed" > "$FUSETRAIN_STARTED_FILE"; exit 1 ;;
esac
SH
chmod +x "$work/stand-in.sh"
# submit_multi NAME MODE [VAR=VALUE...]: multinode.sbatch on the only node there is, run NAME, stand-in MODE.
submit_multi() {
  local name=$1 mode=$2
  shift 2
  env "$@" CONFIG="$work/tiny.yaml" FUSETRAIN_BIN="$bin" LAUNCHER="$work/stand-in.sh $mode" RUN_NAME="$name" \
    STAND_IN_DIR="$work" FT_LAUNCHER="$FT_LAUNCHER" sbatch --parsable --nodes=1 --ntasks-per-node=2 \
    --gpus-per-node=0 --cpus-per-task=1 --output="$work/$name.out" "$FUSETRAIN_SOURCE/jobs/slurm/multinode.sbatch"
}
# The multi-node script's per-node check and named run, after one launch that failed before the world formed.
multi_job=$(submit_multi multi once)
always_job=$(submit_multi always always START_ATTEMPTS=2)
formed_job=$(submit_multi formed formed)
echo "submitted multinode.sbatch as jobs $multi_job, $always_job, $formed_job"

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
relaunch="before their MPI world formed; launching again"
grep -q "ended (exit 139) $relaunch (attempt 2 of 3)" "$work/multi.out" || { echo "FAIL: multi was not launched again"; exit 1; }
[ "$(wc -l < "$work/once.count")" -eq 2 ] || { echo "FAIL: multi took $(wc -l < "$work/once.count") launches, not 2"; exit 1; }
[ "$(cat "$work/once.started" 2>/dev/null)" = "MPI world of 2 rank(s) formed" ] ||
  { echo "FAIL: rank 0 of multi wrote no world-formed file"; exit 1; }
[ ! -e "$work/runs/.multi.started" ] || { echo "FAIL: the world-formed file of multi was left behind"; exit 1; }
for job in "$always_job" "$formed_job"; do
  cluster_wait "$job" 120
  scontrol show job "$job" -o | grep -q "JobState=FAILED" || { echo "FAIL: job $job did not fail"; exit 1; }
done
[ "$(wc -l < "$work/always.count")" -eq 2 ] || { echo "FAIL: START_ATTEMPTS=2 made $(wc -l < "$work/always.count") launches"; exit 1; }
[ "$(grep -c "$relaunch" "$work/always.out")" -eq 1 ] || { echo "FAIL: always.out does not say 'launching again' once"; exit 1; }
[ "$(wc -l < "$work/formed.count")" -eq 1 ] || { echo "FAIL: a launch whose world formed was launched again"; exit 1; }
! grep -q "$relaunch" "$work/formed.out" || { echo "FAIL: formed.out says 'launching again'"; exit 1; }

"$bin" report "$work/runs/tiny-$train_job.h5" "$work/runs/multi.h5" "$work"/sweep/results/*.h5 | tee "$work/report.md"
grep -q "| tiny-$train_job | simple_cnn | fashion-mnist | 2 | mpi | 64 (global 128) |" "$work/report.md"
grep -q "| multi | simple_cnn | fashion-mnist | 2 | mpi | 64 (global 128) |" "$work/report.md"
grep -q "| p000-ranks=1 | simple_cnn | fashion-mnist | 1 | mpi | 64 |" "$work/report.md"
grep -q "| p001-ranks=2 | simple_cnn | fashion-mnist | 2 | mpi | 64 (global 128) |" "$work/report.md"
echo "PASS"
