#!/usr/bin/env bash
# Bad configurations must stop fusetrain before MPI or any rank allocates anything: exit status 2, one message
# naming the file, line, column and key (even under mpirun -np 2), no output folder, within seconds.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
prep_data "$WORK/data"
runs=$WORK/runs

# config_case NAME YAML EXPECTED_REGEX [extra fusetrain args...]: one bad config run by a single process.
config_case() {
  local name=$1 yaml=$2 expected=$3
  shift 3
  printf '%s\n' "$yaml" > "$WORK/$name.yaml"
  run_case "$name" 30 "$FT" train --config "$WORK/$name.yaml" "$@"
  expect_status 2
  expect_message "^fusetrain: config error: .*$expected"
  expect_count 1 "error:"
  expect_no_message "^fusetrain [0-9.]+: |^epoch "
  expect_absent "$runs"
  # A config error ends the run at start: measured 0.4-2.7 s over the default, AVX2 and AVX512 ISAs and a busy
  # core (tests/README.md, "Thresholds"); bound 10 s.
  expect_faster_than 10
  pass
}

base="data: {path: $WORK/data}
output: {dir: $runs}"

# Malformed YAML: file, line and column of the problem.
check config_case malformed_yaml "$base
model:
  name: simple_cnn
  dropout: 0.5: 0.6" "malformed_yaml\.yaml:5:[0-9]+: malformed YAML: illegal map value"
check config_case malformed_tab "$base
model:
	name: simple_cnn" "malformed_tab\.yaml:4:[0-9]+: malformed YAML: .*; line 4 holds a tab character: YAML indents and separates with spaces only"
# A key given twice: refused at the second, naming the first (yaml-cpp alone keeps one silently).
check config_case duplicate_key "$base
optimizer:
  lr: 0.1
  lr: 0.5" "duplicate_key\.yaml:5:3: key 'optimizer\.lr': duplicate key: 'optimizer\.lr' is also set at line 4; keep one of them"
check config_case duplicate_section "$base
train: {epochs: 1}
train: {epochs: 2}" "duplicate_section\.yaml:4:1: key 'train': duplicate key: 'train' is also set at line 3"
# An integer out of the key's range says which integers it takes.
check config_case seed_negative "$base
train: {seed: -1}" "seed_negative\.yaml:3:[0-9]+: key 'train\.seed': '-1' is out of range: expected an integer from 0 to 18446744073709551615"
# output.name is a file name: a path in it would write outside output.dir, or fail only after training.
check config_case name_with_folder "$base" "--set output\.name=sub/x: key 'output\.name': 'sub/x' is a path, not a file name: put folders in output\.dir" \
  --set output.name=sub/x
check config_case name_escapes "$base" "key 'output\.name': '\.\./escaped' is a path, not a file name" --set output.name=../escaped
check config_case name_dot_dot "$base" "key 'output\.name': '\.\.' is not a file name" --set output.name=..

# Unknown keys: the nearest valid key is suggested, for a section and for a key inside one.
check config_case unknown_key "$base
optimizer: {lr: 0.1, momentun: 0.9}" "unknown_key\.yaml:3:22: key 'optimizer\.momentun': unknown key \(did you mean 'optimizer\.momentum'\?\)"
check config_case unknown_section "$base
optimiser: {lr: 0.1}" "unknown_section\.yaml:3:1: key 'optimiser': unknown key \(did you mean 'optimizer'\?\)"
check config_case unknown_set_key "$base" "--set data\.batch_sise=8: key 'data\.batch_sise': unknown key \(did you mean 'data\.batch_size'\?\)" \
  --set data.batch_sise=8

# Wrong types.
check config_case wrong_type_int "output: {dir: $runs}
data: {path: $WORK/data, batch_size: many}" "wrong_type_int\.yaml:2:[0-9]+: key 'data\.batch_size': expected an? int value, got 'many'"
check config_case wrong_type_fraction "$base
train: {epochs: 1.5}" "wrong_type_fraction\.yaml:3:[0-9]+: key 'train\.epochs': expected an integer, got '1\.5'"
check config_case wrong_type_map "$base
train: [1, 2]" "wrong_type_map\.yaml:3:1: key 'train': expected a map of settings"
check config_case wrong_choice "$base
optimizer: {name: adagrad}" "wrong_choice\.yaml:3:[0-9]+: key 'optimizer\.name': 'adagrad' is not one of sgd\|adam\|adamw\|rmsprop"

# Out-of-range values.
check config_case negative_lr "$base
optimizer: {lr: -0.1}" "negative_lr\.yaml:3:[0-9]+: key 'optimizer\.lr': must be > 0, got -0\.1"
check config_case dropout_range "$base" "--set model\.dropout=1\.5: key 'model\.dropout': must be between 0 and 0\.99, got 1\.5" \
  --set model.dropout=1.5
check config_case zero_batch "$base" "--set data\.batch_size=0: key 'data\.batch_size': must be >= 1, got 0" --set data.batch_size=0
check config_case infinite_timeout "$base
distributed: {stall_timeout_s: .inf}" "key 'distributed\.stall_timeout_s': must be a finite number"
check config_case interface_not_a_name "$base" "key 'distributed\.interface': 'eth 1' is not a network interface name" \
  --set "distributed.interface=eth 1"
# A name this node lacks: found before MPI starts, naming the node and the interfaces it has.
check config_case interface_missing "$base" "distributed\.interface: node .+ has no network interface 'nosuch0'; its interfaces: .*lo \(127\.0\.0\.1" \
  --set distributed.interface=nosuch0

# Contradictory settings. On a host without CUDA, nccl is rejected first even with allow_device_sharing.
check config_case nccl_device_sharing "$base
distributed: {backend: nccl, allow_device_sharing: true}" "(allow_device_sharing cannot be used with backend 'nccl'|distributed\.backend 'nccl' needs CUDA)"
if ! "$FT" info 2>/dev/null | grep -Eqi "cuda devices?: [1-9]"; then
  check config_case fp16_on_cpu "$base
precision: {dtype: fp16}" "precision\.dtype 'fp16' needs a CUDA device; use bf16 \(CPU autocast\) or fp32 on CPU"
  check config_case nccl_on_cpu "$base
distributed: {backend: nccl}" "distributed\.backend 'nccl' needs CUDA devices; use 'mpi' or 'gloo' on CPU"
  check config_case cuda_on_cpu "$base
train: {device: cuda}" "train\.device is 'cuda' but no CUDA device is available"
  check config_case cuda_graphs_on_cpu "$base
train: {cuda_graphs: true}" "train\.cuda_graphs needs a CUDA device: this run trains on the CPU \(train\.device 'auto'\)"
fi
# The fused conv+ReLU kernel computes float32 NCHW: fp64 or channels_last with it is refused before any
# device is asked for (on a GPU it would fail at the first forward, or copy every input).
check config_case fused_fp64 "$base
model: {name: simple_cnn, conv_relu: fused}
precision: {dtype: fp64}" "model\.conv_relu 'fused' computes in float32 .*precision\.dtype 'fp64' needs model\.conv_relu 'aten'"
check config_case fused_channels_last "$base
model: {name: simple_cnn, conv_relu: fused}
precision: {channels_last: true}" "model\.conv_relu 'fused' reads NCHW tensors: with precision\.channels_last every forward would copy"
# A CUDA runtime that cannot list its devices (a driver that does not match it) is named when train.device
# is cuda (FUSETRAIN_TEST_CUDA_FAILURE stands in for the failure; builds with CUDA only).
if "$FT" info 2>/dev/null | grep -q "^CUDA kernels: built"; then
  FUSETRAIN_TEST_CUDA_FAILURE="cudaErrorSystemDriverMismatch: stand-in" check config_case cuda_driver_broken "$base
train: {device: cuda}" "train\.device is 'cuda' but no CUDA device is available to this process: the CUDA runtime cannot list the devices \(cudaErrorSystemDriverMismatch: stand-in\): check the driver"
fi
# distributed.reproducible names what its guarantee needs.
reproducible="distributed: {reproducible: true}
data: {path: $WORK/data, shuffle: global}
train: {threads: 1}"
check config_case reproducible_local_shuffle "$base
distributed: {reproducible: true}
train: {threads: 1}" "distributed\.reproducible needs data\.shuffle global .*, not 'local'"
check config_case reproducible_auto_threads "output: {dir: $runs}
distributed: {reproducible: true}
data: {path: $WORK/data, shuffle: global}" "distributed\.reproducible needs a fixed train\.threads"
check config_case reproducible_accumulation "output: {dir: $runs}
$reproducible" "distributed\.reproducible needs train\.accumulation_steps 1" --set train.accumulation_steps=2
check config_case reproducible_compression "output: {dir: $runs}
$reproducible" "distributed\.reproducible needs distributed\.compression none" --set distributed.compression=bf16
# model.sync_batchnorm and compression powersgd refuse by name what they cannot work with.
check config_case sync_batchnorm_without_batchnorm "$base
model: {name: simple_cnn, sync_batchnorm: true}" "model\.sync_batchnorm: model\.name 'simple_cnn' has no BatchNorm layer to synchronise"
check config_case sync_batchnorm_stack_without_bn "$base
model: {name: conv_stack, sync_batchnorm: true, layers: [{type: conv, out: 4}, relu, {type: linear}]}" "model\.sync_batchnorm: model\.name 'conv_stack' \(model\.layers without a bn layer\) has no BatchNorm layer"
check config_case reproducible_sync_batchnorm "output: {dir: $runs}
$reproducible
model: {name: resnet9, sync_batchnorm: true}" "distributed\.reproducible needs model\.sync_batchnorm false: its BatchNorm statistics are those of each micro-batch"
check config_case reproducible_powersgd "output: {dir: $runs}
$reproducible" "distributed\.reproducible needs distributed\.compression none" --set distributed.compression=powersgd
check config_case powersgd_fp16 "$base
distributed: {compression: powersgd}
precision: {dtype: fp16}" "distributed\.compression 'powersgd' needs precision\.dtype fp32, bf16 or fp64, not 'fp16'"
check config_case powersgd_rank_zero "$base" "key 'distributed\.powersgd_rank': must be >= 1, got 0" --set distributed.powersgd_rank=0
check config_case buckets_inverted "$base
distributed: {bucket_mib: 1, first_bucket_mib: 4}" "distributed\.first_bucket_mib \(4\) must not exceed distributed\.bucket_mib \(1\)"
check config_case last_bucket_too_big "$base
distributed: {bucket_mib: 1, first_bucket_mib: 0.5, last_bucket_mib: 2}" "distributed\.last_bucket_mib \(2\) must not exceed distributed\.bucket_mib \(1\)"
missing_file() {
  run_case missing_file 30 "$FT" train --config "$WORK/no_such.yaml"
  expect_status 2
  expect_message "^fusetrain: config error: cannot read config file .*/no_such\.yaml"
  pass
}
check missing_file

# Under mpirun every rank fails the same way before MPI_Init, and only one prints.
mpirun_case() {
  # shellcheck disable=SC2086
  run_case "mpirun_$1" 60 $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/$1.yaml"
  expect_status 2
  expect_count 1 "^fusetrain: config error: "
  expect_no_message "^fusetrain [0-9.]+: |^epoch |rank [0-9]+ .*error"
  expect_absent "$runs"
  # Measured 1.5-2.7 s (tests/README.md, "Thresholds"); bound 20 s.
  expect_faster_than 20
  pass
}
for name in malformed_yaml fp16_on_cpu; do
  if [ -f "$WORK/$name.yaml" ]; then check mpirun_case "$name"; fi
done
finish "config errors"
