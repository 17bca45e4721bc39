#!/usr/bin/env bash
# The GPU suite's own check, run on any host: where a (stand-in) CUDA device is visible, a gpu case whose
# data, build part or tool is missing must fail naming it; where none is visible it must skip (77) saying so.
# usage: suite_check.sh (environment as for gpu_cases.sh: FUSETRAIN_BIN, FUSETRAIN_SOURCE, FUSETRAIN_TMP)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/failure/lib.sh
source "$here/../failure/lib.sh"
: "${FUSETRAIN_SOURCE:?}"
REAL_INFO=$("$FT" info 2>&1) || { echo "FAIL: $FT info failed: $REAL_INFO" >&2; exit 1; }

# nvidia-smi stand-ins: one that lists an H100, one that fails as it does on a host without the driver.
fake_nvidia_smi() {
  mkdir -p "$WORK/$1"
  printf '#!/bin/sh\n%s\n' "$2" > "$WORK/$1/nvidia-smi"
  chmod +x "$WORK/$1/nvidia-smi"
}
fake_nvidia_smi gpu-host 'echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5e1c0a4f-0000-4000-8000-000000000000)"'
fake_nvidia_smi cpu-host 'echo "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver."; exit 9'
mkdir -p "$WORK/no-gpus" "$WORK/one-gpu/0000:01:00.0" "$WORK/empty-checkout"

# fusetrain_as NAME KERNELS DEVICES BACKENDS: $WORK/NAME holds fusetrain-prep and a fusetrain whose `info`
# is the real one's with the CUDA kernels line, the device count and the backends replaced; any other
# command runs the real fusetrain.
fusetrain_as() {
  local dir=$WORK/$1 info
  mkdir -p "$dir"
  ln -sf "$FUSETRAIN_BIN/fusetrain-prep" "$dir/fusetrain-prep"
  info=$(grep -Ev '^(backends|CUDA kernels|CUDA devices):|^  [0-9]+: ' <<< "$REAL_INFO")
  info=$(printf '%s\nbackends: %s\nCUDA kernels: %s\n' "$info" "$4" "$2")
  [ "$3" = - ] || info=$(printf '%s\nCUDA devices: %s\n' "$info" "$3")
  [ "${3:-0}" = - ] || [ "$3" -eq 0 ] || info=$(printf '%s\n  0: NVIDIA H100 80GB HBM3, 79.2 GiB, compute capability 9.0, 132 SMs\n' "$info")
  cat > "$dir/fusetrain" <<STANDIN
#!/usr/bin/env bash
if [ "\${1:-}" = info ]; then
  cat <<'INFO'
$info
INFO
  exit 0
fi
exec "$FT" "\$@"
STANDIN
  chmod +x "$dir/fusetrain"
}
fusetrain_as cpu-build "not built" - "mpi, gloo"
fusetrain_as gpu-build "built (runtime 13.0)" 1 "mpi, gloo, nccl"
fusetrain_as gpu-build-no-nccl "built (runtime 13.0)" 1 "mpi, gloo"
fusetrain_as gpu-build-no-device "built (runtime 13.0)" 0 "mpi, gloo, nccl"

# scenario NAME HOST BIN [VAR=VALUE...] -- SCRIPT ARGS...: runs a suite script as on a host whose nvidia-smi
# is $WORK/HOST's, with fusetrain from $WORK/BIN (or the real build for "real"), no GPU in /proc, none
# hidden by CUDA_VISIBLE_DEVICES and the default data, unless a VAR=VALUE says otherwise.
scenario() {
  local name=$1 host=$2 bin=$FUSETRAIN_BIN vars=()
  [ "$3" = real ] || bin=$WORK/$3
  shift 3
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  run_case "$name" 120 env -u CUDA_VISIBLE_DEVICES -u FUSETRAIN_CIFAR10_JPG PATH="$WORK/$host:$PATH" \
    FUSETRAIN_BIN="$bin" FUSETRAIN_TMP="$WORK/tmp/$name" FUSETRAIN_NVIDIA_GPUS_DIR="$WORK/no-gpus" \
    "${vars[@]}" bash "$here/$1" "${@:2}"
}

# verdict STATUS REGEX: the scenario exited with STATUS and printed a line matching REGEX.
verdict() {
  expect_status "$1"
  expect_message "$2"
  echo "PASS [$CASE] exit $STATUS: $(grep -E -m1 '^(SKIP|FAIL)' "$OUT" || true)"
}

# What lib.sh reads from `fusetrain info` is in the real build's output, in the stand-ins' format.
info_format() {
  CASE=info_format OUT=$WORK/real_info.log
  echo "$REAL_INFO" > "$OUT"
  expect_message "^backends: mpi(, [a-z]+)*$"
  expect_message "^CUDA kernels: (built \(runtime [0-9.]+\)|not built)$"
  if grep -q '^CUDA kernels: built' "$OUT"; then expect_message "^CUDA devices: [0-9]+$"; fi
  echo "PASS [info_format]: $(grep -E '^(backends|CUDA)' "$OUT" | paste -sd ';' -)"
}

no_device_skips() {
  local name script
  for script in "train_fp32:gpu_cases.sh train_fp32" "bench_kernels:gpu_cases.sh bench_kernels" \
                "gtest:gpu_gtest.sh /bin/false Any.*"; do
    name=${script%%:*}
    # shellcheck disable=SC2086  # the script and its arguments
    scenario "no_device_$name" cpu-host gpu-build -- ${script#*:}
    verdict 77 "^SKIP: no CUDA device visible \(neither nvidia-smi -L nor $WORK/no-gpus lists a GPU\)$"
  done
  scenario hidden_empty gpu-host gpu-build CUDA_VISIBLE_DEVICES= -- gpu_cases.sh train_fp32
  verdict 77 "^SKIP: no CUDA device visible \(CUDA_VISIBLE_DEVICES='' hides every device\)$"
  scenario hidden_minus_one gpu-host gpu-build CUDA_VISIBLE_DEVICES=-1 -- gpu_cases.sh stop_resume
  verdict 77 "^SKIP: no CUDA device visible \(CUDA_VISIBLE_DEVICES='-1' hides every device\)$"
}

cpu_build_fails() {
  local built="but $WORK/cpu-build/fusetrain was built without CUDA \(CUDA kernels: not built\): build with -DFUSETRAIN_CUDA=ON"
  scenario cpu_build gpu-host cpu-build -- gpu_cases.sh train_fp32
  verdict 1 "^FAIL \[setup\]: nvidia-smi -L lists 1 GPU\(s\), $built$"
  scenario cpu_build_gtest gpu-host cpu-build -- gpu_gtest.sh /bin/false "Any.*"
  verdict 1 "^FAIL \[setup\]: nvidia-smi -L lists 1 GPU\(s\), $built$"
  scenario cpu_build_proc cpu-host cpu-build FUSETRAIN_NVIDIA_GPUS_DIR="$WORK/one-gpu" -- gpu_cases.sh bench_gray
  verdict 1 "^FAIL \[setup\]: $WORK/one-gpu lists 1 GPU\(s\), $built$"
}

# The real build, as on a GPU host: it fails naming the build (no CUDA) or the missing device (no driver
# here). Where the build does see a device this is a GPU host, and the suite itself runs instead.
real_build_fails() {
  if grep -Eq '^CUDA devices: [1-9]' <<< "$REAL_INFO"; then
    echo "PASS [real_build]: not checked, this build sees a CUDA device (the gpu cases run for real here)"
  elif grep -q '^CUDA kernels: not built' <<< "$REAL_INFO"; then
    scenario real_build gpu-host real -- gpu_cases.sh train_fp32
    verdict 1 "^FAIL \[setup\]: nvidia-smi -L lists 1 GPU\(s\), but .* was built without CUDA"
  else
    scenario real_build gpu-host real -- gpu_cases.sh train_fp32
    verdict 1 "^FAIL \[setup\]: nvidia-smi -L lists 1 GPU\(s\), but fusetrain info sees 0 CUDA device\(s\)"
  fi
}

missing_parts_fail() {
  scenario no_device_in_build gpu-host gpu-build-no-device -- gpu_cases.sh bench_kernels
  verdict 1 "^FAIL \[setup\]: nvidia-smi -L lists 1 GPU\(s\), but fusetrain info sees 0 CUDA device\(s\)"
  scenario no_nccl gpu-host gpu-build-no-nccl -- gpu_cases.sh train_fp32
  verdict 1 "^FAIL \[setup\]: this fusetrain was built without the nccl backend \(backends: mpi, gloo\): build with -DFUSETRAIN_NCCL=ON$"
  scenario no_mpirun gpu-host gpu-build FUSETRAIN_MPIRUN="$WORK/no-such-mpirun --oversubscribe" -- gpu_cases.sh train_bf16
  verdict 1 "^FAIL \[setup\]: needs '$WORK/no-such-mpirun', which is not on PATH$"
  scenario no_archive gpu-host gpu-build FUSETRAIN_CIFAR10_JPG="$WORK/absent/cifar10-jpg.tar.xz" -- gpu_cases.sh train_fp32
  verdict 1 "^FAIL \[setup\]: CIFAR-10 archive $WORK/absent/cifar10-jpg.tar.xz \(FUSETRAIN_CIFAR10_JPG\) not present$"
  scenario no_subset gpu-host gpu-build FUSETRAIN_SOURCE="$WORK/empty-checkout" -- gpu_cases.sh bench_gray
  verdict 1 "^FAIL \[setup\]: CIFAR-10 subset $WORK/empty-checkout/tests/data/cifar10-subset.tar.xz not present \(part of the checkout\): remake it with tests/data/make_cifar10_subset.sh"
  # fewer GPUs than a case needs is hardware this host lacks, not a missing part: a skip
  scenario one_of_two gpu-host gpu-build -- gpu_cases.sh nccl_equivalence
  verdict 77 "^SKIP: needs 2 CUDA devices, this host shows 1$"
}

# Refusals a GPU case expects that come before any CUDA call, checked here with the real build and a
# stand-in device list (FUSETRAIN_TEST_GPUS) as a GPU host would show them: NCCL asked to put two ranks
# on one GPU. Needs a build with the CUDA kernels and NCCL.
refusals_before_cuda() {
  if ! grep -q '^CUDA kernels: built' <<< "$REAL_INFO" || ! grep -Eq '^backends: .*nccl' <<< "$REAL_INFO"; then
    echo "PASS [refusals_before_cuda]: not checked, this build lacks the CUDA kernels or NCCL"
    return 0
  fi
  scenario nccl_shared_gpu gpu-host gpu-build FUSETRAIN_TEST_GPUS=GPU-5e1c0a4f-0000-4000-8000-000000000000 \
    -- gpu_cases.sh nccl_shared_gpu
  verdict 0 "^PASS \[nccl_sharing_allowed\]"
}

check info_format
check refusals_before_cuda
check no_device_skips
check cpu_build_fails
check real_build_fails
check missing_parts_fail
finish "the GPU suite skips only without a CUDA device and fails on what is missing"
