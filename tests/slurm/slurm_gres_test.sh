#!/usr/bin/env bash
# GPU placement on what SLURM hands over: a private one-node cluster with 2 stand-in GPUs (gres/gpu over
# device files) binds tasks to GPUs, and `fusetrain info --placement` under srun decides each rank's
# device from its CUDA_VISIBLE_DEVICES through the stand-in device list (FUSETRAIN_TEST_GPUS).
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
cluster_start "$work/cluster" 2
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
echo PASS
