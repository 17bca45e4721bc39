# Helpers of the GPU suite (ctest -L gpu), on top of the failure suite's: skip with a stated reason
# (exit 77) unless a CUDA device is visible to a CUDA build, and real CIFAR-10 shards prepared once.
# shellcheck shell=bash
# shellcheck source=tests/failure/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../failure/lib.sh"

# require_gpus N: skip unless this build has CUDA kernels and at least N CUDA devices are visible.
require_gpus() {
  local info count
  info=$("$FT" info 2>&1) || { echo "FAIL: fusetrain info failed: $info" >&2; exit 1; }
  if ! grep -q '^CUDA kernels: built' <<< "$info"; then
    echo "SKIP: this fusetrain was built without CUDA (fusetrain info: $(grep '^CUDA kernels' <<< "$info"))"
    exit 77
  fi
  count=$(sed -n 's/^CUDA devices: \([0-9]*\).*/\1/p' <<< "$info")
  if [ "${count:-0}" -lt "$1" ]; then
    echo "SKIP: needs $1 visible CUDA device(s), fusetrain info sees ${count:-0}"
    exit 77
  fi
  GPUS=$count
}

# cifar_shards: real CIFAR-10 (the JPEG release of ../shared/data, or FUSETRAIN_CIFAR10_JPG), 5000 train
# and 5000 test images as 2+2 shards, prepared once per build tree and shared by the GPU tests.
cifar_shards() {
  local archive=${FUSETRAIN_CIFAR10_JPG:-${FUSETRAIN_SOURCE:-.}/../shared/data/cifar10-jpg.tar.xz}
  local cache=$FUSETRAIN_TMP/../cifar10-5k
  [ -f "$archive" ] || { echo "SKIP: CIFAR-10 archive $archive not present (set FUSETRAIN_CIFAR10_JPG)"; exit 77; }
  mkdir -p "$cache"
  (
    flock 9
    if [ ! -f "$cache/data/test-00001-of-00002.h5" ]; then
      [ -d "$cache/cifar10-jpg/train" ] || tar -xJf "$archive" -C "$cache"
      "$FUSETRAIN_BIN/fusetrain-prep" --format folder --input "$cache/cifar10-jpg" --output "$cache/data" \
        --shards 2 --name cifar10 --limit 5000 > "$cache/prep.log" 2>&1
    fi
  ) 9> "$cache/.lock" || { OUT=$cache/prep.log; ft_fail "fusetrain-prep of CIFAR-10 failed"; }
  CIFAR=$cache/data
}

# gpu_config FILE [YAML lines...]: simple_cnn on the CIFAR-10 shards, one rank per GPU over NCCL, 3
# epochs; a given line replaces the default of its section.
gpu_config() {
  local file=$1 line given keep lines=()
  shift
  for line in "data: {path: $CIFAR, batch_size: 128, augment: {flip: true, crop_padding: 4}}" \
              "optimizer: {name: sgd, lr: 0.05, momentum: 0.9}" "train: {epochs: 3, seed: 11, device: cuda}" \
              "distributed: {backend: nccl, stall_timeout_s: 60}"; do
    keep=yes
    for given in "$@"; do [ "${given%%:*}" != "${line%%:*}" ] || keep=no; done
    [ "$keep" = no ] || lines+=("$line")
  done
  write_config "$file" "$CIFAR" "${lines[@]}" "$@"
}

# results_value FILE OBJECT: one value of a results file (a dataset's last value, or an attribute).
results_value() { "$FT" inspect "$1" "$2" | tail -n 1; }

# expect_accuracy FILE MIN: the final test accuracy in FILE is at least MIN (a fraction).
expect_accuracy() {
  local acc
  acc=$(results_value "$1" /summary/final_test_acc)
  awk -v a="$acc" -v m="$2" 'BEGIN { exit !(a >= m) }' || ft_fail "final test accuracy $acc below $2"
}
