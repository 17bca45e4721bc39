#!/usr/bin/env bash
# GPU placement on what SLURM hands over: a private one-node cluster with 2 stand-in GPUs (gres/gpu over
# device files) and 8 CPUs declared binds tasks to GPUs, and `fusetrain info --placement` under srun decides each
# rank's device from its CUDA_VISIBLE_DEVICES through the stand-in device list (FUSETRAIN_TEST_GPUS). Then the
# job script itself (jobs/slurm/train.sbatch, submitted as a user would, under srun and under mpirun) with a
# stand-in fusetrain that reports what each rank was given: every rank sees the node's GPUs and takes its own,
# and srun's step has the job's CPUs per task.
set -euo pipefail
: "${FUSETRAIN_BIN_DIR:?}" "${FUSETRAIN_TMP:?}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=local_cluster.sh
source "$here/local_cluster.sh"
bin=$FUSETRAIN_BIN_DIR/fusetrain
work=$FUSETRAIN_TMP/gres
rm -rf "$work" && mkdir -p "$work"
"$bin" info | grep -q '^CUDA kernels: built' || { echo "SKIP: this build has no CUDA: ranks never pick a GPU"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

finish() {
  local status=$?
  cluster_report_failure "$status" "$work"
  cluster_stop
}
trap finish EXIT
FT_CLUSTER_CPUS=8 cluster_start "$work/cluster" 2
[ "$FT_LAUNCHER" = "srun --mpi=pmix" ] ||
  { echo "SKIP: srun has no pmix plugin here, and mpirun does not pass SLURM's per-task GPUs to ranks"; exit 77; }
export FUSETRAIN_TEST_GPUS=GPU-aaaa-0000,GPU-bbbb-1111
node=$(hostname)

# place NAME SRUN-OPTIONS -- INFO-OPTIONS: srun 2 tasks of `fusetrain info --placement`; output in NAME.out.
place() {
  local name=$1 srun_options=() status=0
  shift
  while [ "$1" != -- ]; do srun_options+=("$1"); shift; done
  shift
  srun --mpi=pmix -n 2 "${srun_options[@]}" "$bin" info --placement "$@" > "$work/$name.out" 2>&1 || status=$?
  cat "$work/$name.out"
  return "$status"
}
expect() { grep -qF -- "$2" "$work/$1.out" || fail "$1: expected '$2'"; }

# --gpus-per-task=1: each task sees only its own GPU; both ranks take index 0, on different devices.
place per_task --gpus-per-task=1 -- --backend nccl || fail "per-task GPUs were refused"
expect per_task "rank 0: node $node, local rank 0, CUDA_VISIBLE_DEVICES '0': cuda:0 of 1 visible, GPU-aaaa-0000"
expect per_task "rank 1: node $node, local rank 1, CUDA_VISIBLE_DEVICES '1': cuda:0 of 1 visible, GPU-bbbb-1111"

# Both GPUs to the step, not bound per task: each task sees both ('0,1'), and the local rank picks.
place all_visible --gpus=2 -- || fail "two GPUs for two tasks were refused"
expect all_visible "rank 0: node $node, local rank 0, CUDA_VISIBLE_DEVICES '0,1': cuda:0 of 2 visible, GPU-aaaa-0000"
expect all_visible "rank 1: node $node, local rank 1, CUDA_VISIBLE_DEVICES '0,1': cuda:1 of 2 visible, GPU-bbbb-1111"

# One GPU for two tasks: sharing is refused, allowed on request, and never with NCCL.
if place one_gpu --gpus=1 --; then fail "two ranks on one GPU were accepted"; fi
expect one_gpu "ranks would share a GPU: node $node: ranks 0 (index 0) and 1 (index 0) on GPU-aaaa-0000"
expect one_gpu "distributed.allow_device_sharing: true"
place one_gpu_shared --gpus=1 -- --allow-device-sharing || fail "allowed sharing was refused"
expect one_gpu_shared "rank 1: node $node, local rank 1, CUDA_VISIBLE_DEVICES '0': cuda:0 of 1 visible, GPU-aaaa-0000"
if place one_gpu_nccl --gpus=1 -- --backend nccl --allow-device-sharing; then fail "NCCL shared a GPU"; fi
expect one_gpu_nccl "NCCL cannot run two ranks on one GPU"
# Separate NCCL hosts (NCCL_HOSTID per task) on the one GPU: accepted, with the line that says so.
srun --mpi=pmix -n 2 --gpus=1 bash -c 'NCCL_HOSTID=host-$SLURM_PROCID exec "$0" info --placement --backend nccl' \
  "$bin" > "$work/one_gpu_nccl_hosts.out" 2>&1 || { cat "$work/one_gpu_nccl_hosts.out"; fail "separate NCCL hosts on one GPU were refused"; }
cat "$work/one_gpu_nccl_hosts.out"
expect one_gpu_nccl_hosts "ranks 0 (index 0) and 1 (index 0) on GPU-aaaa-0000: separate NCCL hosts"

# The job script as submitted: its fusetrain stands in, reporting the GPUs the rank sees and its step's CPUs
# per task, then placing the ranks as a run with NCCL would.
cat > "$work/fusetrain" <<STANDIN
#!/usr/bin/env bash
case " \$* " in *" --dry-run "*) exec "$bin" "\$@" ;; esac
tres=\$(scontrol show step "\$SLURM_JOB_ID.\$SLURM_STEP_ID" 2> /dev/null | grep -o 'TresPerTask=[^ ]*' || echo 'TresPerTask=none')
echo "task \${OMPI_COMM_WORLD_RANK:-\$SLURM_PROCID}: sees CUDA_VISIBLE_DEVICES '\${CUDA_VISIBLE_DEVICES-unset}', step \$tres"
exec "$bin" info --placement --backend nccl
STANDIN
chmod +x "$work/fusetrain"

# submit NAME SCRIPT LAUNCHER SBATCH-OPTIONS...: SCRIPT (train.sbatch) with 2 ranks, 3 CPUs each; output in NAME.out.
submit() {
  local name=$1 script=$2 launcher=$3 job
  shift 3
  job=$(sbatch --parsable -o "$work/$name.out" --ntasks-per-node=2 --cpus-per-task=3 "$@" \
    --export="ALL,CONFIG=$FUSETRAIN_SOURCE/configs/quickstart.yaml,FUSETRAIN_BIN=$work/fusetrain,RUN_NAME=binding${launcher:+,LAUNCHER=$launcher}" \
    "$script")
  cluster_wait "$job" 120
  cat "$work/$name.out"
}
both_gpus_each_its_own() {
  expect "$1" "rank 0: node $node, local rank 0, CUDA_VISIBLE_DEVICES '0,1': cuda:0 of 2 visible, GPU-aaaa-0000"
  expect "$1" "rank 1: node $node, local rank 1, CUDA_VISIBLE_DEVICES '0,1': cuda:1 of 2 visible, GPU-bbbb-1111"
}
script=$FUSETRAIN_SOURCE/jobs/slurm/train.sbatch
mpirun_launcher="mpirun --allow-run-as-root --oversubscribe"
submit script_srun "$script" "" --gpus-per-node=2
expect script_srun "task 0: sees CUDA_VISIBLE_DEVICES '0,1', step TresPerTask=cpu:3"
expect script_srun "task 1: sees CUDA_VISIBLE_DEVICES '0,1', step TresPerTask=cpu:3"
both_gpus_each_its_own script_srun
submit script_mpirun "$script" "$mpirun_launcher" --gpus-per-node=2
expect script_mpirun "task 0: sees CUDA_VISIBLE_DEVICES '0,1'"
expect script_mpirun "task 1: sees CUDA_VISIBLE_DEVICES '0,1'"
both_gpus_each_its_own script_mpirun
# The control: the script with one GPU bound per task, as it was. mpirun's daemon starts as one srun task with
# one GPU, so both ranks see the same one, and NCCL's placement refuses them; the script warns.
sed 's/^#SBATCH --gpus-per-node=4$/#SBATCH --gpus-per-task=1/' "$script" > "$work/per_task.sbatch"
grep -qx '#SBATCH --gpus-per-task=1' "$work/per_task.sbatch" || fail "train.sbatch has no '#SBATCH --gpus-per-node=4' line"
submit per_task_mpirun "$work/per_task.sbatch" "$mpirun_launcher"
expect per_task_mpirun "train.sbatch: warning: --gpus-per-task binds one GPU to each task"
expect per_task_mpirun "task 0: sees CUDA_VISIBLE_DEVICES '0'"
expect per_task_mpirun "task 1: sees CUDA_VISIBLE_DEVICES '0'"
expect per_task_mpirun "NCCL cannot run two ranks on one GPU"
echo PASS
