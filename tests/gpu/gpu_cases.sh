#!/usr/bin/env bash
# The GPU suite: training on real CIFAR-10 with NCCL in every precision, stop and resume on the GPU and
# across devices, ranks sharing a GPU, NCCL's refusal to share one, benchmarks and NVML samples.
# usage: gpu_cases.sh CASE (one ctest entry per case; each skips with 77 and a reason where no CUDA device
# is visible, and fails with the reason where one is but data, a build part or a tool is missing)
# shellcheck disable=SC2086  # $FUSETRAIN_MPIRUN is a command line, split into words on purpose
set -euo pipefail
# shellcheck source=tests/gpu/lib.sh
source "$(dirname "$0")/lib.sh"
CASE_NAME=$1

# train_precision NAME PRECISION_LINE MIN_ACC: 1 rank, NCCL, 3 epochs; learns, names the GPU, samples NVML.
train_precision() {
  gpu_training 1 nccl
  gpu_config "$WORK/$1.yaml" "$2" "output: {dir: $WORK/runs, name: $1}"
  run_case "$1" 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/$1.yaml"
  expect_status 0
  expect_message "^epoch   3/3 "
  expect_message "backend nccl, device cuda:0"
  local results=$WORK/runs/$1.h5 device
  expect_accuracy "$results" "$3"
  device=$("$FT" inspect "$results" /ranks/device)
  case "$device" in cpu*|"") ft_fail "rank 0's device is '$device', not a GPU" ;; esac
  [ "$("$FT" inspect "$results" /ranks/phase_clock)" = cuda_events ] ||
    ft_fail "the phase times of a GPU run were not taken with CUDA events"
  pass
  # The trained model scored again on the GPU by evaluate gives the run's own final accuracy (1000 test
  # images: 0.002 is two of them, for cuDNN's choice of algorithms).
  run_case "$1_evaluate" 300 "$FT" evaluate --checkpoint "$WORK/runs/$1.model" --device cuda --out "$WORK/$1-eval.h5"
  expect_status 0
  within "evaluate --device cuda against the run's final test accuracy" "$(results_value "$results" /summary/final_test_acc)" \
    "$("$FT" inspect "$WORK/$1-eval.h5" /evaluation/top1)" 0.002
  pass
}

# Accuracy bounds on the subset (5000 train images; 1000 test images, so 0.001 is one image). The same
# configs on the CPU (device: cpu, backend mpi) reach 0.394 after 3 epochs on 1 rank (39 steps an epoch)
# and 0.284 after 2 epochs on 2 ranks (19 steps an epoch of 256 images). Each GPU bound sits about 0.09
# below its CPU figure, for what differs on a GPU (augmentation there, cuDNN's algorithms, fp16/bf16), and at
# least twice chance (0.10), so that a model that does not learn fails.
MIN_ACC_3_EPOCHS=0.30
MIN_ACC_2_EPOCHS=0.20
case_train_fp32() { train_precision train_fp32 "precision: {dtype: fp32}" "$MIN_ACC_3_EPOCHS"; }
case_train_fp16() { train_precision train_fp16 "precision: {dtype: fp16, channels_last: true}" "$MIN_ACC_3_EPOCHS"; }
case_train_bf16() { train_precision train_bf16 "precision: {dtype: bf16, channels_last: true}" "$MIN_ACC_3_EPOCHS"; }

# NVML utilisation samples of every rank land in the results file.
case_nvml_samples() {
  gpu_training 1 nccl
  gpu_config "$WORK/nvml.yaml" "output: {dir: $WORK/runs, name: nvml}"
  run_case nvml 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/nvml.yaml"
  expect_status 0
  local samples
  samples=$("$FT" inspect "$WORK/runs/nvml.h5" /utilization/gpu_percent | wc -l)
  [ "$samples" -ge 3 ] || ft_fail "only $samples NVML samples in the results file (NVML not loaded?)"
  pass
}

# stop_at_step NAME CONFIG STEP EPOCH EPOCH_STEP: runs CONFIG on 1 rank with the test aid
# FUSETRAIN_TEST_STOP_AT_STEP=STEP, which stops the run as SIGUSR1 does once STEP optimizer steps are done
# (no race between a signal and a fast GPU epoch); expects exit 75, the checkpoint, and the stop line naming
# EPOCH and EPOCH_STEP (the step within that epoch).
stop_at_step() {
  local name=$1 config=$2 step=$3 epoch=$4 epoch_step=$5 checkpoint
  run_case "$name" 600 env FUSETRAIN_TEST_STOP_AT_STEP="$step" $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$config"
  expect_status 75
  expect_message "^stopped by signal at epoch $epoch, step $epoch_step; checkpoint "
  expect_no_message "^epoch   $epoch/"
  checkpoint=$(sed -n 's/^stopped by signal at .*; checkpoint //p' "$OUT")
  [ -f "$checkpoint" ] || ft_fail "the stop names checkpoint '$checkpoint', which does not exist"
  pass
}

# within NAME A B TOLERANCE: |A - B| <= TOLERANCE.
within() {
  awk -v a="$2" -v b="$3" -v t="$4" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }' ||
    ft_fail "$1: $2 and $3 differ by more than $4"
}

# Stopped as by SIGUSR1 on the GPU (at step 49: 39 steps an epoch, so epoch 2's 10th) and resumed
# there: the same epochs as an uninterrupted run, and metrics within the tolerance of GPU non-determinism
# (cuDNN's algorithms are not bit-reproducible): final test accuracy within 0.04, last train loss within 0.1.
case_stop_resume() {
  gpu_training 1 nccl
  gpu_config "$WORK/straight.yaml" "train: {epochs: 4, seed: 11, device: cuda}" "output: {dir: $WORK/runs, name: straight}"
  run_case straight 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/straight.yaml"
  expect_status 0
  gpu_config "$WORK/resumed.yaml" "train: {epochs: 4, seed: 11, device: cuda}" "output: {dir: $WORK/runs, name: resumed}"
  stop_at_step stopped "$WORK/resumed.yaml" 49 2 10
  run_case resumed 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/resumed.yaml"
  expect_status 0
  expect_message "^resuming from $WORK/runs/resumed.ckpt at epoch 2, step 10$"
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

# A GPU run's checkpoint resumes on the CPU (another partition) with another backend, and finishes. The
# GPU run stops at step 25: 2560 images at batch 128 are 20 steps an epoch, so epoch 2's 5th.
case_resume_on_cpu() {
  gpu_training 1 nccl
  gpu_config "$WORK/moved.yaml" "data: {path: $CIFAR, batch_size: 128, limit_train: 2560, limit_test: 500}" \
    "train: {epochs: 2, seed: 11, device: cuda}" "output: {dir: $WORK/runs, name: moved}"
  stop_at_step moved_gpu "$WORK/moved.yaml" 25 2 5
  run_case moved_cpu 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/moved.yaml" \
    --set train.device=cpu --set distributed.backend=mpi
  expect_status 0
  expect_message "^resuming from $WORK/runs/moved.ckpt at epoch 2, step 5$"
  expect_message "device cpu"
  expect_message "^epoch   2/2 "
  pass
}

# share_gpu BACKEND: 2 ranks on one GPU over MPI or Gloo, replicas verified bit-identical every 10 steps.
share_gpu() {
  gpu_training 1 "$1"
  gpu_config "$WORK/share_$1.yaml" "train: {epochs: 2, seed: 11, device: cuda}" \
    "distributed: {backend: $1, stall_timeout_s: 60, allow_device_sharing: true, verify_replicas: 10}" \
    "output: {dir: $WORK/runs, name: share_$1}"
  run_case "share_$1" 600 env CUDA_VISIBLE_DEVICES=0 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/share_$1.yaml"
  expect_status 0
  expect_message "2 rank\(s\) on 1 node\(s\), backend $1, device cuda:0"
  expect_no_message "diverged"
  expect_accuracy "$WORK/runs/share_$1.h5" "$MIN_ACC_2_EPOCHS"
  pass
}
case_share_mpi() { share_gpu mpi; }
case_share_gloo() { share_gpu gloo; }

# sync_powersgd NAME RANKS BACKEND [SHARING]: resnet9 with every BatchNorm over all ranks' images and PowerSGD
# gradients (rank 2, compressed from step 10): the layers' sums and the factors' all-reduces on the device's
# streams (NCCL: one GPU per rank, or the several-NCCL-hosts mode) or through host memory (Gloo, 2 ranks sharing
# GPU 0); it learns, and replicas (BatchNorm's statistics too) stay bit-identical every 10 steps. The global
# batch is 256 images on any number of ranks, so the run takes the same steps and the accuracy bound means the
# same (4 ranks of 128 images take half as many, too few for BatchNorm's running statistics to settle).
sync_powersgd() {
  local sharing=()
  if [ -n "${4:-}" ]; then gpu_training 1 "$3"; sharing=(env CUDA_VISIBLE_DEVICES=0); else gpu_training "$2" "$3"; fi
  gpu_config "$WORK/$1.yaml" "data: {path: $CIFAR, batch_size: $((256 / $2)), augment: {flip: true, crop_padding: 4}}" \
    "model: {name: resnet9, width: 16, sync_batchnorm: true}" \
    "train: {epochs: 2, seed: 11, device: cuda}" \
    "distributed: {backend: $3, stall_timeout_s: 60, verify_replicas: 10, compression: powersgd, powersgd_rank: 2, powersgd_start_step: 10${4:+, allow_device_sharing: true}}" \
    "output: {dir: $WORK/runs, name: $1}"
  run_case "$1" 600 "${sharing[@]}" $FUSETRAIN_MPIRUN -np "$2" "$FT" train --config "$WORK/$1.yaml"
  expect_status 0
  expect_message "$2 rank\(s\) on 1 node\(s\), backend $3, device cuda:0"
  expect_no_message "diverged"
  echo "figure: $1 on $2 ranks: final test accuracy $(results_value "$WORK/runs/$1.h5" /summary/final_test_acc)"
  expect_accuracy "$WORK/runs/$1.h5" "$MIN_ACC_2_EPOCHS"
  pass
}
case_sync_powersgd_nccl() { sync_powersgd sync_powersgd_nccl "$(nccl_ranks)" nccl; }
case_sync_powersgd_shared() { sync_powersgd sync_powersgd_shared 2 gloo sharing; }

# NCCL cannot put two ranks on one GPU: a clear error from both ways of asking, never a hang.
case_nccl_shared_gpu() {
  gpu_training 1 nccl
  gpu_config "$WORK/nccl2.yaml" "output: {dir: $WORK/runs, name: nccl2}"
  run_case nccl_two_ranks 120 env CUDA_VISIBLE_DEVICES=0 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/nccl2.yaml"
  expect_failure
  expect_message "error: ranks would share a GPU: .*: NCCL cannot run two ranks on one GPU; give each rank its own GPU"
  expect_count 1 "fusetrain: error:"  # one report, not one per rank (a host's own tools may print "error" too)
  pass
  run_case nccl_sharing_allowed 120 env CUDA_VISIBLE_DEVICES=0 $FUSETRAIN_MPIRUN -np 2 "$FT" train \
    --config "$WORK/nccl2.yaml" --set distributed.allow_device_sharing=true
  expect_status 2
  expect_message "distributed.allow_device_sharing cannot be used with backend 'nccl'"
  pass
}

# The ranks of the several-rank NCCL cases: FUSETRAIN_GPU_NCCL_RANKS (2 by default; 4 where a window has the time).
nccl_ranks() { echo "${FUSETRAIN_GPU_NCCL_RANKS:-2}"; }

# expect_nccl_hosts_line: in the several-NCCL-hosts mode, the run said its ranks share GPU 0 as separate NCCL hosts.
expect_nccl_hosts_line() {
  [ -z "$NCCL_HOSTS" ] || expect_message "separate NCCL hosts \(distinct NCCL_HOSTID\) on one GPU"
}

# NCCL across N GPUs (nccl_ranks) equals 1 GPU with the N-fold batch (same images per step, no augmentation,
# global shuffle, no dropout: each rank's dropout stream would draw other masks than the one rank's): first- and
# last-epoch train loss within 1% and 2%, final test accuracy within 0.02.
case_nccl_equivalence() {
  local ranks
  ranks=$(nccl_ranks)
  gpu_training "$ranks" nccl
  local data="data: {path: $CIFAR, batch_size: BATCH, shuffle: global, limit_train: 4096, limit_test: 1000}"
  local model="model: {name: simple_cnn, dropout: 0}"
  gpu_config "$WORK/one.yaml" "${data/BATCH/128}" "$model" "train: {epochs: 2, seed: 5, device: cuda}" \
    "output: {dir: $WORK/runs, name: one}"
  gpu_config "$WORK/two.yaml" "${data/BATCH/$((128 / ranks))}" "$model" "train: {epochs: 2, seed: 5, device: cuda}" \
    "output: {dir: $WORK/runs, name: two}"
  run_case nccl_one 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/one.yaml"
  expect_status 0
  run_case nccl_two 600 $FUSETRAIN_MPIRUN -np "$ranks" "$FT" train --config "$WORK/two.yaml"
  expect_status 0
  expect_nccl_hosts_line
  local a b
  a=$("$FT" inspect "$WORK/runs/one.h5" /epochs/train_loss | head -n 1)
  b=$("$FT" inspect "$WORK/runs/two.h5" /epochs/train_loss | head -n 1)
  echo "figure: first-epoch train loss 1 rank $a, $ranks ranks $b"
  within "first-epoch train loss (relative)" 1 "$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')" 0.01
  a=$(results_value "$WORK/runs/one.h5" /epochs/train_loss)
  b=$(results_value "$WORK/runs/two.h5" /epochs/train_loss)
  echo "figure: last-epoch train loss 1 rank $a, $ranks ranks $b"
  within "last-epoch train loss (relative)" 1 "$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')" 0.02
  a=$(results_value "$WORK/runs/one.h5" /summary/final_test_acc)
  b=$(results_value "$WORK/runs/two.h5" /summary/final_test_acc)
  echo "figure: final test accuracy 1 rank $a, $ranks ranks $b"
  within "final test accuracy" "$a" "$b" 0.05
  pass
}

# quick_config FILE [YAML lines...]: a short GPU run (1280 training images, 1 epoch).
quick_config() {
  local file=$1
  shift
  gpu_config "$file" "data: {path: $CIFAR, batch_size: 128, limit_train: 1280, limit_test: 500}" \
    "train: {epochs: 1, seed: 11, device: cuda}" "$@"
}

# The fused conv+ReLU kernel inside a bf16 autocast run: it computes in float32, and the network learns as
# the cuDNN one does (train_bf16's 3 epochs on the subset, held to the same bound).
case_fused_conv_bf16() {
  gpu_training 1 nccl
  gpu_config "$WORK/fused.yaml" "model: {name: simple_cnn, conv_relu: fused}" "precision: {dtype: bf16}" \
    "output: {dir: $WORK/runs, name: fused}"
  run_case fused_bf16 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/fused.yaml"
  expect_status 0
  expect_message "^epoch   3/3 "
  expect_accuracy "$WORK/runs/fused.h5" "$MIN_ACC_3_EPOCHS"
  pass
}

# No host synchronisation inside a training step in fp32, bf16 and fp16, eager and replayed from a CUDA
# graph: the steps after the first run under CUDA's synchronisation debug mode set to error (the test aid
# FUSETRAIN_TEST_SYNC_DEBUG), so any .item(), blocking copy or stream synchronisation inside one fails the
# run. The loss flag is read every 100000 steps here (the default, 50, is a deliberate read).
# sync_free_runs RANKS LABEL SETTINGS...: one run per setting (a precision, optionally ",graphs").
sync_free_runs() {
  local ranks=$1 label=$2 setting precision graphs name
  shift 2
  for setting in "$@"; do
    precision=${setting%%,*}
    graphs=false
    [ "$setting" = "${setting%,graphs}" ] || graphs=true
    name=sync_${label}_${precision}_$graphs
    quick_config "$WORK/$name.yaml" "precision: {dtype: $precision}" ${SYNC_FREE_DATA:+"$SYNC_FREE_DATA"} \
      "train: {epochs: ${SYNC_FREE_EPOCHS:-1}, seed: 11, device: cuda, loss_check_every: 100000, cuda_graphs: $graphs}" \
      "output: {dir: $WORK/runs, name: $name}"
    run_case "no_host_sync_$name" 300 env FUSETRAIN_TEST_SYNC_DEBUG=1 $FUSETRAIN_MPIRUN -np "$ranks" "$FT" train \
      --config "$WORK/$name.yaml"
    expect_status 0
    expect_no_message "synchroniz"
    expect_message "^epoch   ${SYNC_FREE_EPOCHS:-1}/${SYNC_FREE_EPOCHS:-1} "
    pass
  done
}
case_no_host_sync() {
  gpu_training 1 nccl
  sync_free_runs 1 one fp32 bf16 fp16 fp32,graphs bf16,graphs fp16,graphs
  sync_check_control
}

# The check's positive control: the test aid FUSETRAIN_TEST_HOST_READ_IN_STEP=1 makes every step after the
# first read the loss to the host inside the step; under the check that run must fail with its error.
sync_check_control() {
  quick_config "$WORK/control.yaml" "train: {epochs: 1, seed: 11, device: cuda, loss_check_every: 100000}" \
    "output: {dir: $WORK/runs, name: control}"
  run_case no_host_sync_control 300 env FUSETRAIN_TEST_SYNC_DEBUG=1 FUSETRAIN_TEST_HOST_READ_IN_STEP=1 \
    $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/control.yaml"
  expect_failure
  expect_message "called a synchronizing CUDA operation"
  expect_no_message "^epoch   1/1 "
  pass
}
# The same on 2 GPUs over NCCL, eager and with the graph's all-reduce after the replay, for 2 epochs of 19 steps:
# more steps than the engine's device clocks make slots for up front (8), so a host that runs ahead reuses and
# adds slots inside the checked steps.
case_no_host_sync_nccl() {
  gpu_training 2 nccl
  SYNC_FREE_DATA="data: {path: $CIFAR, batch_size: 128, limit_train: 5000, limit_test: 500}" SYNC_FREE_EPOCHS=2 \
    sync_free_runs 2 two fp32 bf16 fp16 bf16,graphs
}

# Eager steps before train.cuda_graphs captures its step (GraphedStep::kWarmupSteps, src/train/graphed_step.h).
GRAPH_WARMUP_STEPS=3

# expect_graphs FILE CAPTURES: the run captured CAPTURES CUDA graphs (results' /summary/graph_captures) and,
# with one, replayed every step after the eager warm-up (the captured step included).
expect_graphs() {
  local steps captures replays
  steps=$(results_value "$1" /summary/optimizer_steps) || ft_fail "no /summary/optimizer_steps in $1"
  captures=$(results_value "$1" /summary/graph_captures) || ft_fail "no /summary/graph_captures in $1"
  replays=$(results_value "$1" /summary/graph_replays) || ft_fail "no /summary/graph_replays in $1"
  [ "$captures" = "$2" ] || ft_fail "$1: $captures CUDA graph captures, expected $2"
  [ "$2" = 1 ] || [ "$replays" = 0 ] || ft_fail "$1: $replays graph replays without a capture"
  [ "$2" = 0 ] || [ "$replays" = $((steps - GRAPH_WARMUP_STEPS)) ] ||
    ft_fail "$1: $replays graph replays of $steps steps, expected $((steps - GRAPH_WARMUP_STEPS))"
}

# graphed_pair NAME RANKS PRECISION [YAML lines...]: the same run (seed, data, 2 epochs of 20 steps) eager and
# with train.cuda_graphs on RANKS GPUs over NCCL; the graphed one captured once and replayed every later
# step, the eager one never captured. Sets EAGER and GRAPHED to their results files.
graphed_pair() {
  local name=$1 ranks=$2 precision=$3 mode
  shift 3
  EAGER=$WORK/runs/${name}_false.h5 GRAPHED=$WORK/runs/${name}_true.h5
  for mode in false true; do
    gpu_config "$WORK/${name}_$mode.yaml" "precision: {dtype: $precision}" \
      "data: {path: $CIFAR, batch_size: 128, shuffle: global, limit_train: 2560, limit_test: 1000}" \
      "train: {epochs: 2, seed: 5, device: cuda, cuda_graphs: $mode}" "output: {dir: $WORK/runs, name: ${name}_$mode}" "$@"
    run_case "${name}_graphs_$mode" 600 $FUSETRAIN_MPIRUN -np "$ranks" "$FT" train --config "$WORK/${name}_$mode.yaml"
    expect_status 0
    expect_message "^epoch   2/2 "
  done
  expect_graphs "$EAGER" 0
  expect_graphs "$GRAPHED" 1
}

# epoch_loss_ratio EPOCH: the graphed run's train loss of EPOCH over the eager run's.
epoch_loss_ratio() {
  awk -v a="$("$FT" inspect "$EAGER" /epochs/train_loss | sed -n "$1p")" \
      -v b="$("$FT" inspect "$GRAPHED" /epochs/train_loss | sed -n "$1p")" 'BEGIN { print b / a }'
}

# graphed_against_eager NAME RANKS PRECISION: graphed_pair, then first-epoch train loss within 2% and final
# test accuracy within 0.03 (dropout masks and cuDNN's algorithms may differ between the two).
graphed_against_eager() {
  graphed_pair "$@"
  within "first-epoch train loss, graphs against eager (relative)" 1 "$(epoch_loss_ratio 1)" 0.02
  within "final test accuracy, graphs against eager" "$(results_value "$EAGER" /summary/final_test_acc)" \
    "$(results_value "$GRAPHED" /summary/final_test_acc)" 0.03
  echo "figure: $1 epoch 2 seconds eager $("$FT" inspect "$EAGER" /epochs/epoch_time_s | tail -n 1)," \
    "graphs $("$FT" inspect "$GRAPHED" /epochs/epoch_time_s | tail -n 1)"
  pass
}

# One rank in fp32 and bf16; then two ranks sharing the GPU over Gloo, which a graph cannot all-reduce
# (refused by name before the first step, exit non-zero, never a hang).
case_cuda_graphs() {
  gpu_training 1 nccl
  graphed_against_eager graphs_fp32 1 fp32
  graphed_against_eager graphs_bf16 1 bf16
  require_backend gloo
  gpu_config "$WORK/graphs_gloo.yaml" "train: {epochs: 1, seed: 5, device: cuda, cuda_graphs: true}" \
    "distributed: {backend: gloo, stall_timeout_s: 60, allow_device_sharing: true}" \
    "output: {dir: $WORK/runs, name: graphs_gloo}"
  run_case graphs_gloo 120 env CUDA_VISIBLE_DEVICES=0 $FUSETRAIN_MPIRUN -np 2 "$FT" train \
    --config "$WORK/graphs_gloo.yaml"
  expect_failure
  expect_message "train.cuda_graphs on 2 ranks all-reduces GPU memory in place: it needs distributed.backend 'nccl'"
  pass
}

# The learning rate on the device: Adam under a linear warm-up (epoch 1) and a cosine decay (epoch 2) changes
# the rate every step, which a replayed graph reads from the fused optimizer's device rates; a rate captured
# as a constant would train at step 4's rate (a quarter of the peak) ever after, and its losses would drift
# away from the eager run's. Each epoch's train loss within 3% and final test accuracy within 0.03 of eager.
# Then fp16 replayed from a graph (loss scaling on the device) learns to train_fp16's bound.
case_cuda_graphs_schedule() {
  gpu_training 1 nccl
  graphed_pair graphs_adam 1 fp32 "optimizer: {name: adam, lr: 0.002}" \
    "scheduler: {name: cosine, warmup_epochs: 1, warmup_start: 0.1, min_lr: 0.0001}"
  within "epoch 1 train loss, graphed Adam against eager (relative)" 1 "$(epoch_loss_ratio 1)" 0.03
  within "epoch 2 train loss, graphed Adam against eager (relative)" 1 "$(epoch_loss_ratio 2)" 0.03
  within "final test accuracy, graphed Adam against eager" "$(results_value "$EAGER" /summary/final_test_acc)" \
    "$(results_value "$GRAPHED" /summary/final_test_acc)" 0.03
  pass
  gpu_config "$WORK/graphs_fp16.yaml" "precision: {dtype: fp16, channels_last: true}" \
    "train: {epochs: 3, seed: 11, device: cuda, cuda_graphs: true}" "output: {dir: $WORK/runs, name: graphs_fp16}"
  run_case graphs_fp16 600 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/graphs_fp16.yaml"
  expect_status 0
  expect_message "^epoch   3/3 "
  [ "$(results_value "$WORK/runs/graphs_fp16.h5" /summary/graph_captures)" = 1 ] || ft_fail "the fp16 run captured no graph"
  expect_accuracy "$WORK/runs/graphs_fp16.h5" "$MIN_ACC_3_EPOCHS"
  pass
}

# Muon with fp16 weights in the fast net through its fused pool+norm+GELU kernels, eager and replayed from
# a graph: the filters' Newton-Schulz iteration, the fp16 gradients kept scaled and the fused kernels inside the
# capture. The two within 2% in first- and 3% in last-epoch train loss and 0.05 in final accuracy, which is at least
# twice chance: cuDNN picks its algorithms in each process, and on an H200 (2026-11-30) this 2-epoch run's accuracy
# near 0.48 came out 0.033 apart between the two while the first-epoch losses agreed within 2%.
# Rates for batch 128 as configs/fast/cifar10_muon.yaml derives its own for 2000 (0.053 x 128, 0.004 / that).
case_muon_half_weights() {
  gpu_training 1 nccl
  graphed_pair muon_half 1 fp16 "precision: {dtype: fp16, channels_last: true, half_weights: true}" \
    "model: {name: fast_cifar, width: 16, logit_divisor: 64, head_unit_std: true, whiten_bias_uniform: true, pool_norm_gelu: fused}" \
    "optimizer: {name: muon, lr: 6.784, momentum: 0.85, nesterov: true, weight_decay: 5.896e-4, muon_lr: 0.24}" \
    "scheduler: {name: linear_decay}" "regularization: {label_smoothing: 0.2}"
  within "first-epoch train loss, graphed Muon fp16 weights against eager (relative)" 1 "$(epoch_loss_ratio 1)" 0.02
  within "last-epoch train loss, graphed against eager (relative)" 1 "$(epoch_loss_ratio 2)" 0.03
  within "final test accuracy, graphed against eager" "$(results_value "$EAGER" /summary/final_test_acc)" \
    "$(results_value "$GRAPHED" /summary/final_test_acc)" 0.05
  expect_accuracy "$GRAPHED" "$MIN_ACC_2_EPOCHS"
  pass
}

# Two GPUs over NCCL: the flat gradient all-reduced after each replay.
case_cuda_graphs_nccl() {
  gpu_training 2 nccl
  graphed_against_eager graphs_nccl 2 fp32
}

# bench allreduce on GPU tensors over MPI and Gloo: each bucket staged through pinned host memory.
case_bench_allreduce_staged() {
  gpu_training 1 mpi
  local backend
  for backend in mpi gloo; do
    run_case "allreduce_$backend" 300 $FUSETRAIN_MPIRUN -np 1 "$FT" bench allreduce --model simple_cnn --device cuda \
      --backend "$backend" --iterations 3 --warmup 1
    expect_status 0
    expect_message "backend $backend "
    expect_message "^\| \(b\) fusion engine \| [0-9.]+ \|"
    pass
  done
  # bench step's 2 ranks on the one GPU: --allow-device-sharing reaches each worker's placement.
  run_case step_shared 300 env CUDA_VISIBLE_DEVICES=0 "$FT" bench step --model simple_cnn --device cuda --ranks 2 \
    --allow-device-sharing --backend mpi --steps 2 --warmup 1
  expect_status 0
  expect_message "^\| 2 \| [0-9.]+ \|"
  pass
}

# Elastic resume on one GPU: 2 ranks share it over Gloo, stop at step 7 (10 steps an epoch at 2 x 64),
# and the run resumes as 1 rank over NCCL with the same global batch.
case_elastic_one_gpu() {
  gpu_training 1 nccl
  require_backend gloo
  quick_config "$WORK/elastic.yaml" "data: {path: $CIFAR, batch_size: 64, limit_train: 1280, limit_test: 500}" \
    "train: {epochs: 2, seed: 11, device: cuda}" \
    "distributed: {backend: gloo, stall_timeout_s: 60, allow_device_sharing: true}" "output: {dir: $WORK/runs, name: elastic}"
  run_case elastic_stop 300 env CUDA_VISIBLE_DEVICES=0 FUSETRAIN_TEST_STOP_AT_STEP=7 $FUSETRAIN_MPIRUN -np 2 \
    "$FT" train --config "$WORK/elastic.yaml"
  expect_status 75
  expect_message "^stopped by signal at epoch 1, step 7; checkpoint "
  pass
  run_case elastic_resume 300 $FUSETRAIN_MPIRUN -np 1 "$FT" train --config "$WORK/elastic.yaml" \
    --set distributed.backend=nccl --set distributed.allow_device_sharing=false
  expect_status 0
  expect_message "^resuming from $WORK/runs/elastic\.ckpt at epoch 1, step 7$"
  expect_message "backend nccl, device cuda:0"
  expect_message "^epoch   2/2 "
  pass
}

# A rank killed (kill -9) mid-run over NCCL: the other stops within the stall timeout with an error naming the
# lost rank, and its report gives the status that makes the job scripts requeue (76). mpirun runs with
# --enable-recovery, which keeps the survivor alive to say so, as srun does (plain mpirun kills the job at once
# and reports the signal; with recovery it may end with status 0: judged by what the rank printed).
case_nccl_rank_killed() {
  gpu_training 2 nccl
  local stall=20 victim start
  quick_config "$WORK/killed.yaml" "train: {epochs: 100, seed: 11, device: cuda}" \
    "distributed: {backend: nccl, stall_timeout_s: $stall}" "output: {dir: $WORK/runs, name: killed}"
  launch killed $FUSETRAIN_MPIRUN --enable-recovery -np 2 "$FT" train --config "$WORK/killed.yaml"
  wait_for_line "$OUT" "^epoch   1/" 300 "$JOB"
  victim=$(rank_pid "train --config $WORK/killed.yaml" 1) || ft_fail "rank 1 not found"
  start=$(now)
  kill -KILL "$victim"
  wait_job $((stall + 60))
  ELAPSED=$(seconds_since "$start")
  expect_message "rank 0 \([^)]*\): error: .*rank 1 \([^)]*\)"
  expect_message "\(exit 76: a rank was lost"
  expect_faster_than $((stall + 20))
  echo "figure: rank 1 killed: rank 0 out after $ELAPSED s (stall timeout $stall s)"
  pass
}

# A rank's device held up (the test aid FUSETRAIN_TEST_DEVICE_HOLD: from step 6 a kernel keeps rank 1's stream busy
# for three stall timeouts): the run ends with a stall naming rank 1 and exit 76, never a hang. The loss is read
# every step, so the held rank's host waits on its device and stays behind at the next collective.
case_nccl_rank_held() {
  gpu_training 2 nccl
  local stall=10
  quick_config "$WORK/held.yaml" "train: {epochs: 20, seed: 11, device: cuda, loss_check_every: 1}" \
    "distributed: {backend: nccl, stall_timeout_s: $stall}" "output: {dir: $WORK/runs, name: held}"
  run_case held $((6 * stall + 120)) env FUSETRAIN_TEST_DEVICE_HOLD="1@6:$((3 * stall))" $FUSETRAIN_MPIRUN -np 2 \
    "$FT" train --config "$WORK/held.yaml"
  expect_status 76
  expect_message "rank 0 \([^)]*\): error: .*rank 1 \([^)]*\)"
  expect_faster_than $((3 * stall + 30))
  echo "figure: rank 1 held on its device: the run ended after $ELAPSED s (stall timeout $stall s)"
  pass
}

# A run stopped on 2 ranks resumes on 1 and, stopped again the same way, on 3: the global batch of 192 (2 x 96)
# splits over each, the stop at step 7 of 10 an epoch (1920 images) resumes there, and every epoch is recorded once.
case_nccl_resize() {
  gpu_training 3 nccl
  local to name
  for to in 1 3; do
    name=resize_$to
    quick_config "$WORK/$name.yaml" "data: {path: $CIFAR, batch_size: 96, limit_train: 1920, limit_test: 500}" \
      "train: {epochs: 2, seed: 11, device: cuda}" "output: {dir: $WORK/runs, name: $name}"
    run_case "${name}_stop" 300 env FUSETRAIN_TEST_STOP_AT_STEP=7 $FUSETRAIN_MPIRUN -np 2 "$FT" train \
      --config "$WORK/$name.yaml"
    expect_status 75
    expect_message "^stopped by signal at epoch 1, step 7; checkpoint "
    pass
    run_case "${name}_resume" 300 $FUSETRAIN_MPIRUN -np "$to" "$FT" train --config "$WORK/$name.yaml"
    expect_status 0
    expect_message "^resuming from $WORK/runs/$name\.ckpt at epoch 1, step 7$"
    expect_message "^epoch   2/2 "
    [ "$("$FT" inspect "$WORK/runs/$name.h5" /epochs/epoch | paste -sd, -)" = "1,2" ] ||
      ft_fail "the run resumed on $to rank(s) does not hold epochs 1 and 2 once each"
    pass
  done
}

# Ranks start from rank 0's weights (the initial broadcast) and stay bit-identical over NCCL: the replicas are
# compared after every step (distributed.verify_replicas: 1) of 2 epochs, with dropout's per-rank streams on.
case_nccl_replicas() {
  gpu_training 2 nccl
  quick_config "$WORK/replicas.yaml" "model: {name: simple_cnn, dropout: 0.3}" \
    "train: {epochs: 2, seed: 11, device: cuda}" "distributed: {backend: nccl, stall_timeout_s: 60, verify_replicas: 1}" \
    "output: {dir: $WORK/runs, name: replicas}"
  run_case replicas 300 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/replicas.yaml"
  expect_status 0
  expect_no_message "diverged"
  expect_message "^epoch   2/2 "
  expect_nccl_hosts_line
  pass
}

# table_cell FILE ROW COLUMN: a figure of a markdown table row whose first cell is ROW (columns from 1).
table_cell() {
  awk -F'|' -v row="$2" -v col="$(($3 + 1))" '{ name = $2; gsub(/^ +| +$/, "", name) }
    name == row { v = $col; gsub(/[ x]/, "", v); print v; exit }' "$1"
}

# at_most NAME A B: A <= B.
at_most() { awk -v a="$2" -v b="$3" 'BEGIN { exit !(a <= b) }' || ft_fail "$1: $2 is more than $3"; }

# bench kernels times cuDNN, cuDNN disabled and the fused kernel on the GPU, and ATen on the CPU. The
# hand-written direct convolution (no tensor cores) forward within 25x of cuDNN's and at most half the
# CPU's time: a kernel that fell back to a slow path, or to the host, fails.
case_bench_kernels() {
  require_gpus 1
  run_case bench_kernels 300 "$FT" bench kernels
  expect_status 0
  local cudnn fused cpu
  cudnn=$(table_cell "$OUT" "ATen conv2d + relu (cuDNN)" 3)
  fused=$(table_cell "$OUT" "fused conv+bias+ReLU kernel" 3)
  cpu=$(table_cell "$OUT" "ATen conv2d + relu" 3)
  if [ -z "$cudnn" ] || [ -z "$fused" ] || [ -z "$cpu" ]; then ft_fail "a row of the table is missing"; fi
  expect_message "^\| ATen conv2d \+ relu \(cuDNN disabled\) \| cuda \| [0-9.]+ \| [0-9.]+ \|$"
  echo "figure: conv forward ms: cuDNN $cudnn, fused kernel $fused, CPU $cpu"
  at_most "fused kernel forward ms against 25x cuDNN's" "$fused" "$(awk -v c="$cudnn" 'BEGIN { print 25 * c }')"
  at_most "fused kernel forward ms against half the CPU's" "$fused" "$(awk -v c="$cpu" 'BEGIN { print c / 2 }')"
  pass
}

# bench gray converts real colour images (the CIFAR-10 test split) with the CUDA kernel (checked against
# the CPU rule inside); on data already on the device it is at least 2x faster than the scalar C++ loop.
case_bench_gray() {
  require_gpus 1
  cifar_shards
  run_case bench_gray 300 "$FT" bench gray --data "$CIFAR" --images 200 --size 128 --out "$WORK/gray"
  expect_status 0
  expect_message "^\| CUDA kernel \(with copies in and out\) \| [0-9.]+ \| [0-9.e+]+x \|$"
  local speedup
  speedup=$(table_cell "$OUT" "CUDA kernel (device-resident)" 3)
  [ -n "$speedup" ] || ft_fail "no device-resident row"
  echo "figure: gray kernel (device-resident) ${speedup}x the scalar loop"
  at_most "the device-resident kernel's speed-up over the scalar loop, against 2" 2 "$speedup"
  pass
}

# bench batch-size gives 5 rows with throughput, peak memory and GPU utilisation for both models: the peak
# memory rises with every doubling of the batch, and the largest batch runs faster than the smallest.
case_bench_batch_size() {
  require_gpus 1
  local model
  for model in resnet18 simple_cnn; do
    run_case "batch_size_$model" 300 "$FT" bench batch-size --model "$model" --max-batch 256 --steps 10
    expect_status 0
    expect_count 5 "^\| [0-9]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$"
    expect_no_message "fusetrain[^:]*: error"
    echo "figure: $model $(batch_rows | awk '{ printf "b%s %s img/s %s MiB; ", $1, $2, $3 }')"
    batch_rows | awk 'NR > 1 && $3 <= mib { bad = 1 } { mib = $3 } END { exit bad }' ||
      ft_fail "peak memory does not rise with the batch size"
    batch_rows | awk 'NR == 1 { first = $2 } { last = $2 } END { exit !(last > first) }' ||
      ft_fail "the largest batch is not faster than the smallest"
    pass
  done
}
# batch_rows: "batch images_per_s peak_MiB" per row of $OUT's table, by batch size.
batch_rows() { sed -nE 's/^\| ([0-9]+) \| ([0-9.]+) \| ([0-9.]+) \| [0-9.]+ \|$/\1 \2 \3/p' "$OUT" | sort -n; }

declare -F "case_$CASE_NAME" > /dev/null || { echo "unknown GPU case '$CASE_NAME'" >&2; exit 2; }
"case_$CASE_NAME"
