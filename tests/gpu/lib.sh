# Helpers of the GPU suite (ctest -L gpu), on top of the failure suite's. A case skips (exit 77) only where
# no CUDA device is visible; on a host with one, missing data, build parts or tools fail it with the reason.
#
# The rehearsal switch FUSETRAIN_GPU_REHEARSAL=1 (tests/gpu/rehearsal.sh sets it, on a machine without a GPU)
# runs every case up to its first use of a device: require_gpus passes once fusetrain says it has its CUDA
# kernels, and the case's first run_case (every case's first device use goes through run_case, or through
# gpu_gtest.sh's binary) ends the case with success after checking what that command would need: its
# program on PATH, its --config file, the CIFAR-10 shards and a writable temp folder. Tools, paths, temp
# folders and data are thereby all found as on a GPU host; nothing touches CUDA.
# shellcheck shell=bash
# shellcheck source=tests/failure/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../failure/lib.sh"
REHEARSAL=${FUSETRAIN_GPU_REHEARSAL:-}

# cuda_device_visible: whether this host shows a CUDA device to this process, whatever fusetrain was built
# with. CUDA_VISIBLE_DEVICES set empty or to -1 hides them all; otherwise `nvidia-smi -L` must list one or
# the driver's /proc/driver/nvidia/gpus (FUSETRAIN_NVIDIA_GPUS_DIR in the suite's own check) hold one.
# Sets CUDA_HOST to what it saw, for messages.
cuda_device_visible() {
  local dir=${FUSETRAIN_NVIDIA_GPUS_DIR:-/proc/driver/nvidia/gpus} listed=0 entries=()
  if [ -n "${CUDA_VISIBLE_DEVICES+set}" ] && { [ -z "$CUDA_VISIBLE_DEVICES" ] || [ "${CUDA_VISIBLE_DEVICES:0:1}" = - ]; }; then
    CUDA_HOST="CUDA_VISIBLE_DEVICES='$CUDA_VISIBLE_DEVICES' hides every device"
    return 1
  fi
  if command -v nvidia-smi > /dev/null; then
    listed=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU [0-9]' || true)
  fi
  if [ "$listed" -gt 0 ]; then
    CUDA_HOST="nvidia-smi -L lists $listed GPU(s)"
    return 0
  fi
  [ -d "$dir" ] && mapfile -t entries < <(ls -A "$dir")
  if [ ${#entries[@]} -gt 0 ]; then
    CUDA_HOST="$dir lists ${#entries[@]} GPU(s)"
    return 0
  fi
  CUDA_HOST="neither nvidia-smi -L nor $dir lists a GPU"
  return 1
}

# The several-NCCL-hosts mode (FUSETRAIN_GPU_NCCL_HOSTS=1; tools/gpu-host/device_check.sh's nccl_hosts stage): a
# case that needs N GPUs runs its N ranks on GPU 0 instead, each an NCCL host of its own (NCCL_HOSTID, through
# tests/gpu/nccl_host_rank.sh), talking over NCCL's socket transport on loopback. NCCL refuses two ranks of one
# host on one GPU, not two hosts; every all-reduce then crosses sockets, so these runs check correctness, not speed.
NCCL_HOSTS=${FUSETRAIN_GPU_NCCL_HOSTS:-}
as_nccl_hosts() {
  export NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 CUDA_VISIBLE_DEVICES=0
  export FUSETRAIN_NCCL_HOST_PROGRAM=$FT
  FT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/nccl_host_rank.sh
}

# require_gpus N: skips unless a CUDA device is visible; then fails unless this fusetrain has CUDA kernels
# and sees one. A host with fewer than N devices skips: the case needs hardware it does not have (in the
# several-NCCL-hosts mode, one device serves N ranks).
require_gpus() {
  local info count
  if [ -n "$REHEARSAL" ]; then
    info=$("$FT" info 2>&1) || ft_fail "fusetrain info failed: $info"
    grep -q '^CUDA kernels: built' <<< "$info" || ft_fail "rehearsal: $FT was built without CUDA"
    [ -z "$NCCL_HOSTS" ] || [ "$1" -lt 2 ] || as_nccl_hosts
    return 0
  fi
  if ! cuda_device_visible; then
    echo "SKIP: no CUDA device visible ($CUDA_HOST)"
    exit 77
  fi
  info=$("$FT" info 2>&1) || ft_fail "fusetrain info failed: $info"
  grep -q '^CUDA kernels: built' <<< "$info" ||
    ft_fail "$CUDA_HOST, but $FT was built without CUDA ($(grep '^CUDA kernels' <<< "$info")): build with -DFUSETRAIN_CUDA=ON"
  count=$(sed -n 's/^CUDA devices: \([0-9]*\).*/\1/p' <<< "$info")
  [ "${count:-0}" -gt 0 ] ||
    ft_fail "$CUDA_HOST, but fusetrain info sees ${count:-no} CUDA device(s) (driver, CUDA runtime or CUDA_VISIBLE_DEVICES?)"
  if [ -n "$NCCL_HOSTS" ] && [ "$1" -ge 2 ]; then
    as_nccl_hosts
    return 0
  fi
  if [ "$count" -lt "$1" ]; then
    echo "SKIP: needs $1 CUDA devices, this host shows $count"
    exit 77
  fi
}

# require_backend NAME: fails unless this fusetrain has the gradient backend NAME (its info's "backends:").
require_backend() {
  local backends
  backends=$("$FT" info 2>&1 | grep '^backends:' || true)  # all read: no SIGPIPE under pipefail
  grep -Eq "^backends: (.*, )?$1(,|$)" <<< "$backends" ||
    ft_fail "this fusetrain was built without the $1 backend (${backends:-no backends line}): build with -DFUSETRAIN_${1^^}=ON"
}

# on_path NAME: NAME is an executable file here, by its path or on PATH (bash's `command -v` alone also
# answers with a file it found but cannot execute).
on_path() {
  local found
  found=$(command -v "$1") && [ -x "$found" ] && [ -f "$found" ]
}

# require_tools NAME...: fails unless every NAME is a command here.
require_tools() {
  local tool
  for tool in "$@"; do
    on_path "$tool" || ft_fail "needs '$tool', which is not on PATH"
  done
}

# gpu_training N BACKEND: what a training case needs: N GPUs, the backend, mpirun and the CIFAR-10 shards.
gpu_training() {
  require_gpus "$1"
  require_backend "$2"
  require_tools "${FUSETRAIN_MPIRUN%% *}"
  cifar_shards
}

# cifar_shards: real CIFAR-10 as 2+2 shards, prepared once per build tree and archive and shared by the GPU
# tests. By default the checkout's subset tests/data/cifar10-subset.tar.xz (500 train and 100 test images
# per class; tests/data/make_cifar10_subset.sh); FUSETRAIN_CIFAR10_JPG may name another archive of the same
# layout. --limit 5000 keeps 5000 train images, the subset's whole train split (prep interleaves the
# classes, so from the full release they are the same images), and up to 5000 test images.
cifar_shards() {
  local archive=${FUSETRAIN_CIFAR10_JPG:-${FUSETRAIN_SOURCE:?}/tests/data/cifar10-subset.tar.xz}
  local cache=$FUSETRAIN_TMP/../cifar10-shards identity
  if [ ! -f "$archive" ]; then
    [ -n "${FUSETRAIN_CIFAR10_JPG:-}" ] || ft_fail "CIFAR-10 subset $archive not present (part of the checkout): remake it with" \
      "tests/data/make_cifar10_subset.sh from the JPEG release, or set FUSETRAIN_CIFAR10_JPG to that release"
    ft_fail "CIFAR-10 archive $archive (FUSETRAIN_CIFAR10_JPG) not present"
  fi
  require_tools tar xz
  identity="$(cd "$(dirname "$archive")" && pwd)/$(basename "$archive") $(stat -c '%s %Y' "$archive")"
  mkdir -p "$cache"
  (
    flock 9
    [ "$(cat "$cache/source" 2> /dev/null)" != "$identity" ] || exit 0
    rm -rf "$cache/cifar10-jpg" "$cache/data" "$cache/source"
    # errexit does not hold in a subshell whose status is tested: each step must succeed for the next
    tar -xJf "$archive" -C "$cache" > "$cache/prep.log" 2>&1 &&
      "$FUSETRAIN_BIN/fusetrain-prep" --format folder --input "$cache/cifar10-jpg" --output "$cache/data" \
        --shards 2 --name cifar10 --limit 5000 >> "$cache/prep.log" 2>&1 &&
      echo "$identity" > "$cache/source"
  ) 9> "$cache/.lock" || { OUT=$cache/prep.log; ft_fail "unpacking $archive or fusetrain-prep of it failed"; }
  CIFAR=$cache/data
}

# gpu_config FILE [YAML lines...]: simple_cnn on the CIFAR-10 shards, one rank per GPU over NCCL, 3
# epochs; a given line replaces the default of its section, and a later given line an earlier one of its
# section (helpers such as quick_config give defaults of their own).
gpu_config() {
  local file=$1 line i sections=() lines=()
  shift
  for line in "data: {path: $CIFAR, batch_size: 128, augment: {flip: true, crop_padding: 4}}" \
              "optimizer: {name: sgd, lr: 0.05, momentum: 0.9}" "train: {epochs: 3, seed: 11, device: cuda}" \
              "distributed: {backend: nccl, stall_timeout_s: 60}" "$@"; do
    for i in "${!sections[@]}"; do
      [ "${sections[i]}" != "${line%%:*}" ] || unset 'sections[i]' 'lines[i]'
    done
    sections+=("${line%%:*}")
    lines+=("$line")
  done
  write_config "$file" "$CIFAR" "${lines[@]}"
}

# results_value FILE OBJECT: one value of a results file (a dataset's last value, or an attribute).
results_value() { "$FT" inspect "$1" "$2" | tail -n 1; }

# expect_accuracy FILE MIN: the final test accuracy in FILE is at least MIN (a fraction).
expect_accuracy() {
  local acc
  acc=$(results_value "$1" /summary/final_test_acc)
  awk -v a="$acc" -v m="$2" 'BEGIN { exit !(a >= m) }' || ft_fail "final test accuracy $acc below $2"
}

# rehearse_train_config COMMAND...: where COMMAND runs `$FT train`, its config and overrides checked as fusetrain
# checks them on a GPU host before any CUDA call (--dry-run, with the stand-in device list FUSETRAIN_TEST_GPUS):
# a config the host would refuse (a duplicate key, a setting that needs what the case lacks) fails the
# rehearsal with fusetrain's own message.
rehearse_train_config() {
  local word seen="" args=() refused
  for word in "$@"; do
    if [ -n "$seen" ]; then args+=("$word"); elif [ "$word" = "$FT" ]; then seen=yes; fi
  done
  [ "${args[0]:-}" = train ] || return 0
  refused=$(FUSETRAIN_TEST_GPUS=GPU-rehearsal "$FT" "${args[@]}" --dry-run 2>&1 > /dev/null) ||
    ft_fail "rehearsal: fusetrain ${args[*]} would be refused: $(grep -v '^\s*$' <<< "$refused" | tail -n 2)"
}

# rehearsal_ready NAME SECONDS COMMAND...: in a rehearsal, where a case would first use a device: checks that
# COMMAND's program (after env's VAR=VALUE words) is on PATH, its --config file exists, the shards (where the
# case has them) hold data and the case's temp folder is writable; then ends the case with success.
rehearsal_ready() {
  local case_name=$1 word program="" config="" previous=""
  shift 2
  for word in "$@"; do
    if [ -z "$program" ] && [ "$word" != env ] && [[ "$word" != *=* ]]; then program=$word; fi
    [ "$previous" != --config ] || config=$word
    previous=$word
  done
  CASE=$case_name
  on_path "$program" || ft_fail "rehearsal: '$program' is not on PATH"
  [ -z "$config" ] || [ -f "$config" ] || ft_fail "rehearsal: the config $config was not written"
  rehearse_train_config "$@"
  [ -z "${CIFAR:-}" ] || compgen -G "$CIFAR/train-*.h5" > /dev/null || ft_fail "rehearsal: no shards in $CIFAR"
  touch "$WORK/.writable" || ft_fail "rehearsal: the temp folder $WORK is not writable"
  echo "PASS [rehearsal $CASE]: ready before the first CUDA call: $(command -v "$program")${config:+, $config}${CIFAR:+,}" \
    "${CIFAR:+data $CIFAR,} temp $WORK"
  echo "figure: ready, fusetrain as $FT"
  exit 0
}
if [ -n "$REHEARSAL" ]; then
  run_case() { rehearsal_ready "$@"; }
  launch() { rehearsal_ready "$1" 0 "${@:2}"; }
fi
