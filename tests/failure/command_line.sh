#!/usr/bin/env bash
# The command line's edges: fusetrain without a command or with an unknown one, predict without its checkpoint;
# `fusetrain bench` without a benchmark, with an unknown one, a benchmark's help, and the NCCL backend asked of
# CPU devices: the usage or a message naming what is wrong, and the exit status.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
mkdir -p "$WORK"

# No command: the usage on stderr, status 2; an unknown command named, then the usage, status 2.
no_command() {
  run_case no_command 30 "$FT"
  expect_status 2
  expect_message "^  bench    benchmarks: "
  [ -z "$("$FT" 2> /dev/null)" ] || ft_fail "the usage went to stdout"
  run_case unknown_command 30 "$FT" trian --config x.yaml
  expect_status 2
  expect_message "^fusetrain: unknown command 'trian'$"
  expect_message "^  train "
  pass
}

# predict without --checkpoint: named, status 2, before it reads any image.
predict_without_checkpoint() {
  run_case predict_without_checkpoint 30 "$FT" predict "$WORK/no-such-image.png"
  expect_status 2
  expect_message "^fusetrain predict: --checkpoint FILE is required \(see --help\)$"
  pass
}

# No benchmark named: the usage on stderr (nothing on stdout), status 2.
bench_no_name() {
  run_case bench_no_name 30 "$FT" bench
  expect_status 2
  expect_message "^fusetrain bench: benchmarks$"
  expect_message "^  fusetrain bench allreduce "
  [ -z "$("$FT" bench 2> /dev/null)" ] || ft_fail "the usage went to stdout"
  pass
}

# An unknown benchmark: named, then the usage, status 2.
bench_unknown() {
  run_case bench_unknown 30 "$FT" bench allreduc
  expect_status 2
  expect_message "^fusetrain bench: unknown benchmark 'allreduc'$"
  expect_message "^  fusetrain bench step "
  pass
}

# A benchmark's own help: its options on stdout, status 0.
bench_help() {
  run_case bench_help 30 "$FT" bench step --help
  expect_status 0
  expect_message "^  --model arg"
  expect_message "^  -h \[ --help \] +show this help$"
  pass
}

# A required option left out is named before anything runs, status 2.
required_option() {
  run_case required_option 30 "$FT" bench gray --images 2
  expect_status 2
  expect_message "^fusetrain bench gray: the option '--data' is required but missing \(see --help\)$"
  pass
}

# Every command's and benchmark's help: status 0 and its option list, also where an option is required.
every_help() {
  local command
  for command in train evaluate report info inspect sweep export predict plan "plan profile" "bench allreduce" \
    "bench step" "bench kernels" "bench gray" "bench batch-size"; do
    # shellcheck disable=SC2086  # a benchmark's name is a word of its own
    run_case "help_${command/ /_}" 30 "$FT" $command --help
    expect_status 0
    expect_message "^  -h \[ --help \] +show this help$"
  done
  pass
}

# NCCL on CPU devices: refused by name with the backends that work there; those two are accepted.
bench_nccl_on_cpu() {
  run_case bench_nccl_on_cpu 60 "$FT" bench allreduce --backend nccl --device cpu --model simple_cnn
  expect_failure
  expect_message "error: --backend nccl needs CUDA devices \(--device cpu: .*\); use --backend mpi or gloo on the CPU$"
  local backend
  for backend in mpi gloo; do
    run_case "bench_${backend}_on_cpu" 60 "$FT" bench allreduce --backend "$backend" --device cpu --model simple_cnn \
      --iterations 1 --warmup 0
    expect_status 0
    expect_message "backend $backend "
  done
  pass
}

check no_command
check predict_without_checkpoint
check bench_no_name
check bench_unknown
check bench_help
check required_option
check every_help
check bench_nccl_on_cpu
finish "the command line's edges"
