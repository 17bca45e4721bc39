#!/usr/bin/env bash
# Elastic by restart on a private two-node SLURM cluster: a job submitted with --nodes=1-2 --requeue runs on
# both nodes; node2 dies mid-run (its slurmd and rank killed); node1's rank must stop within the stall
# timeout naming the lost rank and exit 76, Slurm marks node2 down and the job is requeued, resumes on node1
# alone at the new world size and finishes, with two segments (2 ranks, then 1) in its results file. Then
# the other way: a job started on node1 alone (node2 still down) is stopped by the time-limit warning once
# node2 is back, and resumes on both nodes (segments 1, then 2).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=netns_cluster.sh
source "$here/netns_cluster.sh"
# shellcheck source-path=SCRIPTDIR source=slurm_cluster.sh
source "$here/slurm_cluster.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh"
: "${FUSETRAIN_SOURCE:?}"
mn_start elastic 2
trap mslurm_finish EXIT
# node2 is declared down 10 s after its slurmd stops answering (Slurm's default waits 300 s).
MSLURM_SETTINGS="SlurmdTimeout=10" mslurm_start "$WORK/cluster" 2
mn_prep 2 1600
stall=8
# Every epoch is checkpointed, so a lost node costs at most one epoch. Global batch 32 (2 x 16, or 1 x 16 x 2).
cat > "$WORK/elastic.yaml" <<YAML
model: {name: simple_cnn, dropout: 0}
data: {path: $WORK/data, batch_size: 16, shuffle: global, limit_train: 1600, limit_test: 400}
optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
train: {epochs: 6, seed: 1, device: cpu, threads: 1, checkpoint_every: 1}
distributed: {stall_timeout_s: $stall}
output: {dir: $WORK/runs}
YAML
export OMPI_MCA_btl=tcp,self,vader OMPI_MCA_btl_tcp_if_include=$NETNS_SUBNET
export OMPI_MCA_btl_vader_single_copy_mechanism=none

# submit NAME: multinode.sbatch with a node range (whole nodes, as many as are free), one rank per node.
submit() {
  CONFIG=$WORK/elastic.yaml FUSETRAIN_BIN=$FT RUN_NAME=$1 RANKS_PER_NODE=1 mslurm sbatch --parsable --nodes=1-2 \
    --exclusive --gpus-per-node=0 --cpus-per-task=1 --requeue --output="$WORK/$1.out" \
    "$FUSETRAIN_SOURCE/jobs/slurm/multinode.sbatch"
}

wait_line() {  # wait_line LOG PATTERN SECONDS
  for _ in $(seq $(($3 * 2))); do grep -Eq "$2" "$1" 2>/dev/null && return 0; sleep 0.5; done
  tail -n 30 "$1" >&2 || true
  mn_fail "no line /$2/ in $1 within $3 s"
}

node_state() { mslurm sinfo -h -n "$1" -o %T 2>/dev/null | head -n 1; }

column() { "$FT" inspect "$WORK/runs/$1.h5" "$2" | paste -sd' '; }

# The run's directory is runs/ under the submit directory (output.dir's default); results and checkpoints.
cd "$WORK"

shrink() {
  local job log=$WORK/shrink.out start took
  job=$(submit shrink)
  echo "submitted job $job with --nodes=1-2"
  wait_line "$log" "^epoch   2/6" 240
  grep -q "2 rank(s) on 2 node(s)" "$log" || mn_fail "job $job does not run 2 ranks on 2 nodes"
  netns_kill_node node2
  start=$(date +%s.%N)
  echo "killed every process of node2 (its slurmd and rank 1)"
  wait_line "$log" "rank 0 \(node1\): error: .*rank 1 \(node2\)" $((stall + 30))
  took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  echo "node1's rank stopped naming rank 1 (node2) $took s after the kill (stall timeout $stall s)"
  awk -v t="$took" -v l=$((stall + 20)) 'BEGIN { exit !(t <= l) }' || mn_fail "took $took s, over $((stall + 20)) s"
  for _ in $(seq 60); do [[ $(node_state node2) == down* ]] && break; sleep 1; done
  [[ $(node_state node2) == down* ]] || mn_fail "Slurm did not mark node2 down (state $(node_state node2))"
  echo "Slurm marks node2 $(node_state node2)"
  mslurm_release "$job"
  mslurm_wait "$job" 300
  mslurm scontrol show job "$job" -o | grep -q "JobState=COMPLETED" || mn_fail "job $job did not complete"
  grep -q "1 node(s) node1, 1 rank(s), run shrink, restart [1-9]" "$log" || mn_fail "the restart is not on node1 alone"
  grep -q "^resuming on 1 rank (the checkpoint was written on 2 ranks): elastic.batch global keeps 32 images per step: 1 rank x 16 x 2 accumulation steps" "$log" ||
    mn_fail "the resumed run does not print its batch rule"
  [ "$(column shrink /segments/world_size)" = "2 1" ] || mn_fail "shrink.h5: segments are not 2 then 1 ranks"
  [ "$(column shrink /segments/node_count)" = "2 1" ] || mn_fail "shrink.h5: segments are not on 2 then 1 nodes"
  [ "$(column shrink /epochs/epoch)" = "1 2 3 4 5 6" ] || mn_fail "shrink.h5: epochs are not 1..6 once each"
  echo "PASS [shrink]"
}

grow() {
  local job log=$WORK/grow.out
  job=$(submit grow)
  echo "submitted job $job with --nodes=1-2 while node2 is down"
  wait_line "$log" "^epoch   1/6" 240
  grep -q "1 rank(s) on 1 node(s)" "$log" || mn_fail "job $job does not start on node1 alone"
  mslurm_slurmd node2
  for _ in $(seq 60); do [ "$(node_state node2)" = idle ] && break; sleep 1; done
  [ "$(node_state node2)" = idle ] || mn_fail "node2 did not return (state $(node_state node2))"
  mslurm scancel --batch --signal=USR1 "$job"
  wait_line "$log" "checkpointed \(exit 75\); requeueing" 120
  mslurm_release "$job"
  mslurm_wait "$job" 300
  mslurm scontrol show job "$job" -o | grep -q "JobState=COMPLETED" || mn_fail "job $job did not complete"
  grep -q "^resuming on 2 ranks (the checkpoint was written on 1 rank): elastic.batch global keeps 16 images per step: 2 ranks x 8" "$log" ||
    mn_fail "the run did not resume on 2 ranks"
  [ "$(column grow /segments/world_size)" = "1 2" ] || mn_fail "grow.h5: segments are not 1 then 2 ranks"
  "$FT" report --segments "$WORK/runs/grow.h5"
  echo "PASS [grow]"
}

shrink
grow
echo "PASS"
