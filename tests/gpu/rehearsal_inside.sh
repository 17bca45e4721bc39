#!/usr/bin/env bash
# The rehearsal's checks, run by rehearsal.sh inside a fresh mount namespace from the fresh checkout: mounts
# the bundle as carried, hides what a GPU host lacks, then unpacks the bundle as device_check.sh does, starts
# fusetrain, runs the linkage check, two unit tests that read their folders from ctest, every GPU case up to
# its first CUDA call (FUSETRAIN_GPU_REHEARSAL=1, through device_check.sh's cases stage) and two CPU training
# runs through the unpacked mpirun; then scans all it unpacked and wrote for the CPU machine's paths.
# usage (rehearsal.sh's): FRESH=DIR BUNDLE_DIR=DIR CPU_SOURCE=DIR CPU_BUILD=DIR FUSETRAIN_PYTHON=PY
#                         [REHEARSAL_KEEP=1] unshare --mount bash THIS
set -euo pipefail
: "${FRESH:?}" "${BUNDLE_DIR:?}" "${CPU_SOURCE:?}" "${CPU_BUILD:?}" "${FUSETRAIN_PYTHON:?}"
checkout=$FRESH/checkout
cd "$checkout"
build=$checkout/$(sed -n 's/^build_name=//p' "$BUNDLE_DIR/bundle.info")
deps=$FRESH/deps
export FUSETRAIN_BIN=$build/bin FUSETRAIN_TMP=$FRESH/out/work
mkdir -p "$build" "$deps" "$FRESH/out"
# What the checks unpack and write lives in memory unless it is to be kept: nothing to delete afterwards.
if [ -z "${REHEARSAL_KEEP:-}" ]; then
  for dir in "$build" "$deps" "$FRESH/out"; do mount -t tmpfs -o mode=0755 rehearsal "$dir"; done
fi
mount --bind "$BUNDLE_DIR" .gpu  # as a device call carries it; mounted before the build folder holding it is hidden
# shellcheck source=tests/failure/lib.sh
source tests/failure/lib.sh

# Every path of $FRESH/hidden made invisible: a folder under an empty tmpfs, a file under an empty file
# (not executable); a path inside a folder hidden before it is gone already.
hide() {
  local path count=0
  CASE=hide
  while IFS= read -r path; do
    if [ -d "$path" ]; then
      mount -t tmpfs -o size=1m,mode=0755 rehearsal "$path" && count=$((count + 1))
    elif [ -f "$path" ]; then
      mount --bind "$FRESH/empty" "$path" && count=$((count + 1))
    fi
  done < "$FRESH/hidden"
  [ ! -e "$CPU_BUILD/bin/fusetrain" ] || ft_fail "the CPU build $CPU_BUILD is still visible"
  [ ! -e "$CPU_SOURCE/CMakeLists.txt" ] || ft_fail "the CPU checkout $CPU_SOURCE is still visible"
  if [ -x "$(command -v mpirun)" ]; then ft_fail "an mpirun is still on PATH: $(command -v mpirun)"; fi
  echo "PASS [hide]: $count paths hidden: $CPU_BUILD, $CPU_SOURCE, /usr/bin/mpirun, Open MPI, HDF5, Gloo, yaml-cpp, Boost"
}

unpack() {
  run_case unpack 240 env DEVICE_CHECK_DEPS="$deps" STAGES=unpack bash tools/gpu-host/device_check.sh .gpu "$FRESH/out/unpack"
  expect_status 0
  expect_message '^\| unpack \| passed \|'
  pass
}

# Without env.sh the bundled fusetrain cannot start on what is left of the machine's libraries: the hiding
# is real.
machine_libraries_hidden() {
  run_case bare_start 60 "$build/bin/fusetrain" --version
  [ "$STATUS" -ne 0 ] || ft_fail "the bundled fusetrain starts without the bundle's libraries: the machine's are not hidden"
  echo "PASS [bare_start]: without env.sh the bundled fusetrain does not start: $(head -n 1 "$OUT")"
}

# The environment device_check.sh's stages run in: the bundle's libraries and mpirun.
use_the_bundle() {
  # shellcheck source=/dev/null
  . "$deps/env.sh"
  [ "$(command -v mpirun)" = "$deps/usr/bin/mpirun" ] || ft_fail "mpirun is $(command -v mpirun), not the bundle's"
}

fusetrain_info() {
  run_case info 60 "$build/bin/fusetrain" info
  expect_status 0
  expect_message '^CUDA kernels: built'
  expect_message '^backends: mpi, gloo, nccl$'
  pass
}

linkage() {
  run_case linkage 300 bash -c "cd '$build' && ctest -L linkage --output-on-failure"
  expect_status 0
  expect_message '100% tests passed, 0 tests failed out of [1-9]'
  pass
}

# Unit tests through the unpacked ctest tree: their folders reach them in ctest's environment (the shipped
# configs in this checkout, the scratch folder in this build).
unit_tests() {
  run_case unit_tests 120 bash -c "cd '$build' && ctest -R '^(ShippedConfigs|TextFile)\\.' --output-on-failure"
  expect_status 0
  expect_message '100% tests passed, 0 tests failed out of [1-9]'
  [ -f "$build/tests/data/text_file_bytes.txt" ] || ft_fail "the unit tests' scratch folder is not $build/tests/data"
  pass
}

# Every GPU case of the build (tier 1 and tier 2) through device_check.sh's cases stage, 2 at a time: each
# must pass, ending where it would first use the device, with its tools, config, data and temp folder found.
gpu_cases() {
  local cases count
  cases=$(cd "$build" && ctest -N -L '^gpu$' | sed -n 's/^ *Test *#[0-9]*: //p')
  count=$(wc -w <<< "$cases")
  [ "$count" -ge 20 ] || ft_fail "ctest in the unpacked build lists only $count GPU cases"
  run_case gpu_cases 300 env FUSETRAIN_GPU_REHEARSAL=1 DEVICE_CHECK_DEPS="$deps" STAGES=cases CASES="$cases" JOBS=2 \
    BUDGET_S=280 bash tools/gpu-host/device_check.sh .gpu "$FRESH/out/cases"
  expect_status 0
  [ "$(grep -cE '^\| gpu\.[a-z0-9_]+ \| passed \|' "$FRESH/out/cases/summary.md")" -eq "$count" ] ||
    { OUT=$FRESH/out/cases/summary.md; ft_fail "not every one of the $count GPU cases passed its rehearsal"; }
  echo "PASS [gpu_cases]: $count GPU cases ready before their first CUDA call, in $ELAPSED s"
}

# The several-NCCL-hosts stage (device_check.sh --tier hosts, a window's first call) up to each case's first CUDA
# call: every case of the stage passes, its ranks' fusetrain the wrapper that makes each an NCCL host of its own.
nccl_hosts_stage() {
  local count
  run_case nccl_hosts 300 env FUSETRAIN_GPU_REHEARSAL=1 DEVICE_CHECK_DEPS="$deps" STAGES=nccl_hosts BUDGET_S=280 \
    bash tools/gpu-host/device_check.sh --tier hosts .gpu "$FRESH/out/hosts"
  expect_status 0
  OUT=$FRESH/out/hosts/summary.md
  count=$(grep -cE '^\| gpu\.[a-z0-9_]+ \| passed \| .*fusetrain as [^ |]*/tests/gpu/nccl_host_rank\.sh' "$OUT" || true)
  [ "$count" -eq 8 ] || ft_fail "$count of the 8 cases of the several-NCCL-hosts stage passed their rehearsal as NCCL hosts"
  echo "PASS [nccl_hosts]: 8 several-rank cases ready as separate NCCL hosts before their first CUDA call, in $ELAPSED s"
}

# cpu_training BACKEND: 2 ranks on the CPU through the unpacked mpirun, on the GPU cases' CIFAR-10 shards
# (256 images, 1 epoch): trains, and its results file (HDF5) reads back.
cpu_training() {
  local data=$build/tests/data/gpu/cifar10-shards/data
  [ -d "$data" ] || ft_fail "no CIFAR-10 shards in $data (prepared by the GPU cases)"
  write_config "$WORK/cpu_$1.yaml" "$data" "data: {path: $data, batch_size: 32, limit_train: 256, limit_test: 100}" \
    "train: {epochs: 1, threads: 1, seed: 7, device: cpu}" "distributed: {backend: $1, stall_timeout_s: 60}" \
    "output: {dir: $WORK/runs, name: cpu_$1}"
  run_case "cpu_train_$1" 180 mpirun --oversubscribe --bind-to none -np 2 "$build/bin/fusetrain" train \
    --config "$WORK/cpu_$1.yaml"
  expect_status 0
  expect_message "2 rank\(s\) on 1 node\(s\), backend $1, device cpu"
  expect_message '^epoch   1/1 '
  "$build/bin/fusetrain" inspect "$WORK/runs/cpu_$1.h5" /summary/final_test_acc > /dev/null ||
    ft_fail "the results file does not read back"
  pass
}

# The real data's way on a small stand-in: a synthetic CIFAR-10 binary release split for two calls
# (data_split.sh), each call's parts stashed (data_assemble.sh), then device_check.sh's data stage (assembled,
# checked, made into shards by the bundled fusetrain-prep) and its fast_vs_airbench row through the harness,
# on the CPU at a tiny size: fusetrain's row stands; airbench94 and the graphed runs, which need CUDA, are
# named and left out.
fast_recipe_on_carried_data() {
  local call
  CASE=carried_data
  bash tests/gpu/make_cifar_bin.sh "$WORK/bin" 200 || ft_fail "no synthetic release"
  env BUNDLE=none LIMIT_MIB=2 MARGIN_MIB=0 CHECKOUT_BYTES=0 bash tools/gpu-host/data_split.sh "$WORK/bin/cifar10-bin.tar.xz" \
    "$WORK/parts" > "$WORK/split.log" || { OUT=$WORK/split.log; ft_fail "data_split.sh failed"; }
  for call in "$WORK"/parts/call*; do
    bash tools/gpu-host/data_assemble.sh stash "$call" "$WORK/store" > /dev/null || ft_fail "stashing $call failed"
  done
  run_case fast_vs_airbench 300 env DEVICE_CHECK_DEPS="$deps" DATA_STORE="$WORK/store" FAST_DIR="$WORK/fast" \
    STAGES="data speed" ROWS=fast_vs_airbench SEEDS=1 WARMUP=1 STEPS=3 BUDGET_S=280 \
    SET="train.device=cpu precision.dtype=fp32 distributed.backend=mpi model.width=8 data.batch_size=64 data.test_batch_size=200 train.threads=1" \
    bash tools/gpu-host/device_check.sh .gpu "$FRESH/out/fast"
  expect_status 0
  expect_message '^\| data \| passed \| [0-9]+ \| fast recipe data cifar10-bin \(sha256 [0-9a-f]{64}\): 1000 training images'
  expect_message '^\| fast_vs_airbench \| passed \|.*data cifar10-bin.*/ fusetrain / 1 / .* / 3 /'
  expect_message 'no airbench94 row'
  pass
}

checks() {
  hide
  unpack
  machine_libraries_hidden
  use_the_bundle
  fusetrain_info
  linkage
  unit_tests
  gpu_cases
  nccl_hosts_stage
  cpu_training mpi
  cpu_training gloo
  fast_recipe_on_carried_data
}

# scan_for OPTIONS PATTERN DIR...: every file under DIR naming PATTERN (grep's OPTIONS: -aF a fixed string in
# any file, -IE a regular expression in text files), as "FILE names PATH"; none, nothing.
scan_for() {
  local options=$1 pattern=$2 file
  shift 2
  { grep -rl "$options" -e "$pattern" --exclude='*.deb' --exclude='*.tar.xz' "$@" 2> /dev/null || true; } |
    while IFS= read -r file; do
      echo "$file names $(grep -o "$options" -e "$pattern" "$file" | head -n 1 | tr -d '\0')"
    done
}

# No file of the fresh folder but the list of what was hidden (the checkout, the unpacked build and
# packages, what the checks wrote) names the CPU machine's build or source folder, binaries included (a path
# compiled in); no text file of the unpacked build keeps a placeholder the unpack stage should have
# replaced; and no text file of the unpacked build and env.sh names a tool or library folder the namespace
# hid (as a path of its own, not the unpacked prefix's copy of it). The binaries' RUNPATH keeps naming
# /usr/lib/x86_64-linux-gnu/{openmpi,hdf5}: harmless, since env.sh's LD_LIBRARY_PATH comes first, as the
# checks (where those folders are empty) show.
scan_paths() {
  local found tool
  CASE=scan OUT=$FRESH/scan.log
  {
    scan_for -aF "$CPU_BUILD" "$checkout" "$deps" "$FRESH/out"
    scan_for -aF "$CPU_SOURCE" "$checkout" "$deps" "$FRESH/out"
    for tool in /usr/bin/mpirun /usr/bin/mpiexec /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/hdf5; do
      scan_for -IE "(^|[^[:alnum:]_./-])$tool" "$build" "$deps/env.sh"
    done
    scan_for -IE '@FUSETRAIN_(BUILD|SOURCE)@' "$build"
  } | sort -u > "$OUT"
  found=$(wc -l < "$OUT")
  [ "$found" -eq 0 ] ||
    ft_fail "$found file(s) name a path of the CPU machine (a GPU host has none of them) or a placeholder left:"
  echo "PASS [scan]: nothing unpacked or written names $CPU_BUILD, $CPU_SOURCE, a hidden tool's path or a placeholder"
}

check checks
check scan_paths
finish "the bundle works where only it and the torch environment are visible, and names no path of the CPU machine"
