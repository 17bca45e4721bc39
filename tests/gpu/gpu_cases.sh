#!/usr/bin/env bash
# The GPU suite: training on real CIFAR-10 with NCCL in every precision, stop and resume on the GPU and
# across devices, ranks sharing a GPU, NCCL's refusal to share one, benchmarks and NVML samples.
# usage: gpu_cases.sh CASE (one ctest entry per case; each skips with 77 and a reason without a GPU)
set -euo pipefail
# shellcheck source=tests/gpu/lib.sh
source "$(dirname "$0")/lib.sh"
CASE_NAME=$1

# train_precision NAME PRECISION_LINE MIN_ACC: 1 rank, NCCL, 3 epochs; learns, names the GPU, samples NVML.
train_precision() {
  require_gpus 1
  cifar_shards
  gpu_config "$WORK/$1.yaml" "$2" "output: {dir: $WORK/runs, name: $1}"
  run_case "$1" 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/$1.yaml"
  expect_status 0
  expect_message "^epoch   3/3 "
  expect_message "backend nccl, device cuda:0"
  local results=$WORK/runs/$1.h5 device
  expect_accuracy "$results" "$3"
  device=$("$FT" inspect "$results" /ranks/device)
  case "$device" in cpu*|"") ft_fail "rank 0's device is '$device', not a GPU" ;; esac
  pass
}

case_train_fp32() { train_precision train_fp32 "precision: {dtype: fp32}" 0.30; }
case_train_fp16() { train_precision train_fp16 "precision: {dtype: fp16, channels_last: true}" 0.30; }
case_train_bf16() { train_precision train_bf16 "precision: {dtype: bf16, channels_last: true}" 0.30; }

# NVML utilisation samples of every rank land in the results file.
case_nvml_samples() {
  require_gpus 1
  cifar_shards
  gpu_config "$WORK/nvml.yaml" "output: {dir: $WORK/runs, name: nvml}"
  run_case nvml 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/nvml.yaml"
  expect_status 0
  local samples
  samples=$("$FT" inspect "$WORK/runs/nvml.h5" /utilization/gpu_percent | wc -l)
  [ "$samples" -ge 3 ] || ft_fail "only $samples NVML samples in the results file (NVML not loaded?)"
  pass
}

# stop_with_usr1 NAME CONFIG [ARGS...]: starts the run, sends SIGUSR1 to rank 0 after epoch 1, expects the
# checkpoint and exit 75; prints the checkpoint's path.
stop_with_usr1() {
  local name=$1 config=$2 pid
  shift 2
  launch "$name" $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$config" "$@"
  wait_for_line "$OUT" "^epoch   1/" 300 "$JOB"
  pid=$(rank_pid "train --config $config" 0) || ft_fail "rank 0 not found"
  kill -USR1 "$pid"
  wait_job 120
  expect_status 75
  expect_message "^stopped by signal at epoch [0-9]+, step [0-9]+; checkpoint "
  pass
}

# within NAME A B TOLERANCE: |A - B| <= TOLERANCE.
within() {
  awk -v a="$2" -v b="$3" -v t="$4" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }' ||
    ft_fail "$1: $2 and $3 differ by more than $4"
}

# Stopped by SIGUSR1 on the GPU and resumed there: the same epochs as an uninterrupted run, and metrics
# within the tolerance of GPU non-determinism (cuDNN's algorithms are not bit-reproducible): final test
# accuracy within 0.04, last train loss within 0.1.
case_stop_resume() {
  require_gpus 1
  cifar_shards
  gpu_config "$WORK/straight.yaml" "train: {epochs: 4, seed: 11, device: cuda}" "output: {dir: $WORK/runs, name: straight}"
  run_case straight 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/straight.yaml"
  expect_status 0
  gpu_config "$WORK/resumed.yaml" "train: {epochs: 4, seed: 11, device: cuda}" "output: {dir: $WORK/runs, name: resumed}"
  stop_with_usr1 stopped "$WORK/resumed.yaml"
  run_case resumed 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/resumed.yaml"
  expect_status 0
  expect_message "^resuming from $WORK/runs/resumed.ckpt at epoch 2, step [0-9]+$"
  expect_message "^epoch   4/4 "
  expect_absent "$WORK/runs/resumed.ckpt"
  [ "$("$FT" inspect "$WORK/runs/resumed.h5" /epochs/epoch | paste -sd, -)" = "1,2,3,4" ] ||
    ft_fail "the resumed results do not hold epochs 1..4"
  within "final test accuracy" "$(results_value "$WORK/runs/straight.h5" /summary/final_test_acc)" \
    "$(results_value "$WORK/runs/resumed.h5" /summary/final_test_acc)" 0.04
  within "last train loss" "$(results_value "$WORK/runs/straight.h5" /epochs/train_loss)" \
    "$(results_value "$WORK/runs/resumed.h5" /epochs/train_loss)" 0.1
  pass
}

# A GPU run's checkpoint resumes on the CPU (another partition) with another backend, and finishes.
case_resume_on_cpu() {
  require_gpus 1
  cifar_shards
  gpu_config "$WORK/moved.yaml" "data: {path: $CIFAR, batch_size: 128, limit_train: 2560, limit_test: 500}" \
    "train: {epochs: 2, seed: 11, device: cuda}" "output: {dir: $WORK/runs, name: moved}"
  stop_with_usr1 moved_gpu "$WORK/moved.yaml"
  run_case moved_cpu 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/moved.yaml" \
    --set train.device=cpu --set distributed.backend=mpi
  expect_status 0
  expect_message "^resuming from $WORK/runs/moved.ckpt at epoch 2, step [0-9]+$"
  expect_message "device cpu"
  expect_message "^epoch   2/2 "
  pass
}

# share_gpu BACKEND: 2 ranks on one GPU over MPI or Gloo, replicas verified bit-identical every 10 steps.
share_gpu() {
  require_gpus 1
  cifar_shards
  gpu_config "$WORK/share_$1.yaml" "train: {epochs: 2, seed: 11, device: cuda}" \
    "distributed: {backend: $1, stall_timeout_s: 60, allow_device_sharing: true, verify_replicas: 10}" \
    "output: {dir: $WORK/runs, name: share_$1}"
  run_case "share_$1" 600 env CUDA_VISIBLE_DEVICES=0 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/share_$1.yaml"
  expect_status 0
  expect_message "2 rank\(s\) on 1 node\(s\), backend $1, device cuda:0"
  expect_no_message "diverged"
  expect_accuracy "$WORK/runs/share_$1.h5" 0.25
  pass
}
case_share_mpi() { share_gpu mpi; }
case_share_gloo() { share_gpu gloo; }

# NCCL cannot put two ranks on one GPU: a clear error from both ways of asking, never a hang.
case_nccl_shared_gpu() {
  require_gpus 1
  cifar_shards
  gpu_config "$WORK/nccl2.yaml" "output: {dir: $WORK/runs, name: nccl2}"
  run_case nccl_two_ranks 120 env CUDA_VISIBLE_DEVICES=0 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/nccl2.yaml"
  expect_failure
  expect_message "runs 2 ranks but has 1 GPU\(s\): start one rank per GPU"
  pass
  run_case nccl_sharing_allowed 120 env CUDA_VISIBLE_DEVICES=0 $FUSETRAIN_MPIRUN -np 2 "$FT" train \
    --config "$WORK/nccl2.yaml" --set distributed.allow_device_sharing=true
  expect_status 2
  expect_message "distributed.allow_device_sharing cannot be used with backend 'nccl'"
  pass
}

# NCCL across 2 GPUs equals 1 GPU with the doubled batch (same images per step, no augmentation, global
# shuffle): first-epoch train loss within 1% and final test accuracy within 0.02.
case_nccl_equivalence() {
  require_gpus 2
  cifar_shards
  local data="data: {path: $CIFAR, batch_size: BATCH, shuffle: global, limit_train: 4096, limit_test: 1000}"
  gpu_config "$WORK/one.yaml" "${data/BATCH/128}" "train: {epochs: 2, seed: 5, device: cuda}" \
    "output: {dir: $WORK/runs, name: one}"
  gpu_config "$WORK/two.yaml" "${data/BATCH/64}" "train: {epochs: 2, seed: 5, device: cuda}" \
    "output: {dir: $WORK/runs, name: two}"
  run_case nccl_one 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/one.yaml"
  expect_status 0
  run_case nccl_two 600 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/two.yaml"
  expect_status 0
  local a b
  a=$("$FT" inspect "$WORK/runs/one.h5" /epochs/train_loss | head -n 1)
  b=$("$FT" inspect "$WORK/runs/two.h5" /epochs/train_loss | head -n 1)
  within "first-epoch train loss (relative)" 1 "$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')" 0.01
  within "final test accuracy" "$(results_value "$WORK/runs/one.h5" /summary/final_test_acc)" \
    "$(results_value "$WORK/runs/two.h5" /summary/final_test_acc)" 0.02
  pass
}

# bench kernels times cuDNN, cuDNN disabled and the fused kernel on the GPU.
case_bench_kernels() {
  require_gpus 1
  run_case bench_kernels 300 "$FT" bench kernels
  expect_status 0
  expect_message "^\| ATen conv2d \+ relu \(cuDNN\) \| cuda \| [0-9.]+ \| [0-9.]+ \|$"
  expect_message "^\| ATen conv2d \+ relu \(cuDNN disabled\) \| cuda \| [0-9.]+ \| [0-9.]+ \|$"
  expect_message "^\| fused conv\+bias\+ReLU kernel \| cuda \| [0-9.]+ \| [0-9.]+ \|$"
  pass
}

# bench gray converts real images with the CUDA kernel (checked against the CPU rule inside).
case_bench_gray() {
  require_gpus 1
  local src=/usr/share/datasets/fashion-mnist
  [ -f "$src/t10k-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
  "$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$WORK/gray-data" --limit 200 > /dev/null
  run_case bench_gray 300 "$FT" bench gray --data "$WORK/gray-data" --images 200 --size 128 --out "$WORK/gray"
  expect_status 0
  expect_message "^\| CUDA kernel \(device-resident\) \| [0-9.]+ \| [0-9.e+]+x \|$"
  expect_message "^\| CUDA kernel \(with copies in and out\) \| [0-9.]+ \| [0-9.e+]+x \|$"
  pass
}

# bench batch-size gives rows with throughput, peak memory and GPU utilisation for both models.
case_bench_batch_size() {
  require_gpus 1
  local model
  for model in resnet18 simple_cnn; do
    run_case "batch_size_$model" 300 "$FT" bench batch-size --model "$model" --max-batch 256 --steps 10
    expect_status 0
    expect_count 5 "^\| [0-9]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$"
    expect_no_message "error"
    pass
  done
}

declare -F "case_$CASE_NAME" > /dev/null || { echo "unknown GPU case '$CASE_NAME'" >&2; exit 2; }
"case_$CASE_NAME"
