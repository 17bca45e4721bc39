#!/usr/bin/env bash
# train.device auto on a host whose CUDA runtime cannot list its devices (a driver that does not match it):
# the run trains on the CPU and says why, where it used to stop with a CUDA error. FUSETRAIN_TEST_CUDA_FAILURE
# stands in for the runtime's error; builds without CUDA never ask the runtime and skip.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
if ! "$FT" info 2>/dev/null | grep -q "^CUDA kernels: built"; then
  echo "SKIP: this fusetrain has no CUDA kernels: train.device auto never asks the CUDA runtime"
  exit 77
fi
prep_data "$WORK/data"
write_config "$WORK/run.yaml" "$WORK/data" "train: {epochs: 1, threads: 1, seed: 7, device: auto}"

auto_falls_back() {
  # shellcheck disable=SC2086
  run_case auto_falls_back 120 env FUSETRAIN_TEST_CUDA_FAILURE="cudaErrorSystemDriverMismatch: stand-in" \
    $FUSETRAIN_MPIRUN -np 2 "$FT" train --config "$WORK/run.yaml"
  expect_status 0
  expect_count 1 "^warning: train\.device auto: the CUDA runtime cannot list the devices \(cudaErrorSystemDriverMismatch: stand-in\): check the driver; training on the CPU$"
  expect_message "device cpu$"
  expect_message "^results: "
  pass
}
check auto_falls_back
finish "device fallback"
