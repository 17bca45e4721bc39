#!/usr/bin/env bash
# jobs/slurm/multinode.sbatch with --nodes=2 on a private two-node SLURM cluster (one slurmd per namespace
# node, ranks started by `srun --mpi=pmix`, MPI over TCP between the nodes): SIGUSR1 to the batch script (as
# --signal=B:USR1@120 sends) must checkpoint the ranks, requeue the job, resume it on both nodes and finish;
# the results file must record 2 nodes, their hostnames and each rank's local rank.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=netns_cluster.sh
source "$here/netns_cluster.sh"
# shellcheck source-path=SCRIPTDIR source=slurm_cluster.sh
source "$here/slurm_cluster.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh"
: "${FUSETRAIN_SOURCE:?}"
mn_start slurm 2
trap mslurm_finish EXIT
mslurm_start "$WORK/cluster" 2
mn_prep 4 4000
# preempt_config EPOCHS: so many epochs at first that no host finishes before the signal lands (4 epochs of
# 16 steps could on a fast one); once it has checkpointed, one epoch past the stop for the requeued run
# (train.epochs may change on resume).
preempt_config() {
  cat > "$WORK/preempt.yaml" <<YAML
model: {name: simple_cnn, dropout: 0.1}
data: {path: $WORK/data, batch_size: 32, limit_train: 2000, limit_test: 500}
optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
train: {epochs: $1, seed: 1, device: cpu, threads: 1}
distributed: {stall_timeout_s: 120}
output: {dir: $WORK/runs, name: preempt}
YAML
}
preempt_config 1000

# The ranks' Open MPI: TCP between the nodes on the data network, shared memory inside a node.
export OMPI_MCA_btl=tcp,self,vader OMPI_MCA_btl_tcp_if_include=$NETNS_SUBNET
export OMPI_MCA_btl_vader_single_copy_mechanism=none
job=$(CONFIG=$WORK/preempt.yaml FUSETRAIN_BIN=$FT mslurm sbatch --parsable --nodes=2 --ntasks-per-node=2 \
  --gpus-per-node=0 --cpus-per-task=1 --output="$WORK/preempt.out" "$FUSETRAIN_SOURCE/jobs/slurm/multinode.sbatch")
echo "submitted multinode.sbatch --nodes=2 as job $job"
log=$WORK/preempt.out
mslurm_await "$job" 300 "$log" "^epoch   1/1000" || mn_fail "the job never finished epoch 1"
grep -q "4 rank(s) on 2 node(s)" "$log" || mn_fail "the job does not run 4 ranks on 2 nodes"

mslurm scancel --batch --signal=USR1 "$job"
echo "sent SIGUSR1 to the batch script of job $job"
mslurm_await "$job" 120 "$log" "checkpointed \(exit 75\); requeueing" || mn_fail "no checkpoint and requeue"
stopped=$(sed -n 's/^stopped by signal at epoch \([0-9]*\),.*/\1/p' "$log" | head -n 1)
[ -n "$stopped" ] || mn_fail "no 'stopped by signal at epoch E' line"
epochs=$((stopped + 1))
preempt_config "$epochs"
mslurm_release "$job"

mslurm_wait "$job" 600
mslurm scontrol show job "$job" -o | grep -q "JobState=COMPLETED" || mn_fail "job $job did not complete"
mslurm scontrol show job "$job" -o | grep -q "Restarts=1" || mn_fail "job $job was not restarted once"
grep -q "2 node(s) node\[1-2\], 4 rank(s), run preempt, restart 1" "$log" || mn_fail "the restart is not on 2 nodes"
grep -q "resuming from $WORK/runs/preempt.ckpt" "$log" || mn_fail "the restarted job did not resume"
[ "$(grep -c "^epoch   1/" "$log")" -eq 1 ] || mn_fail "epoch 1 was trained twice"
"$FT" report --csv "$WORK/runs/preempt.h5" | tee "$WORK/report.csv"
awk -F, -v n="$epochs" 'NR == 2 && $4 == 4 && $8 == n { ok = 1 } END { exit !ok }' "$WORK/report.csv" ||
  mn_fail "the results file does not show 4 ranks and $epochs epochs"
[ "$(mn_h5 "$WORK/runs/preempt.h5" /provenance node_count)" = 2 ] || mn_fail "preempt.h5: node_count is not 2"
hosts=$(mn_h5 "$WORK/runs/preempt.h5" /ranks/hostname | tr -d '"' | tr '\n' ' ')
[ "$hosts" = "node1 node1 node2 node2 " ] || mn_fail "preempt.h5: hostnames are '$hosts'"
locals=$(mn_h5 "$WORK/runs/preempt.h5" /ranks/local_rank | tr '\n' ' ')
[ "$locals" = "0 1 0 1 " ] || mn_fail "preempt.h5: local ranks are '$locals'"
echo "PASS"
