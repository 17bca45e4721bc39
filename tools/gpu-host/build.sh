#!/usr/bin/env bash
# Builds fusetrain and its tests on a bare GPU host (CUDA with nvcc, CMake, Ninja and a Python whose
# torch is a CUDA build; no root, no package registry) from the .deb files of fetch-debs.sh, then runs
# the tests a GPU host is for. Everything lands under PREFIX (unpacked libraries, env.sh) and BUILD.
# The build always has the CUDA kernels and NCCL (-DFUSETRAIN_CUDA=ON -DFUSETRAIN_NCCL=ON, after any extra
# cmake arguments): where nvcc, a CUDA torch or pip's NCCL is missing it stops, naming it.
#
# usage: tools/gpu-host/build.sh DEB_DIR [BUILD_DIR] [-- extra cmake arguments]
#   PREFIX=...     where the packages are unpacked (default ~/.cache/fusetrain/gpu-deps)
#   TARGETS=...    build only these targets (default: all)
#   TESTS=host     what ctest runs after the build: host (default: the labels gpu, linkage and mpi),
#                  gpu (the label gpu alone), all, or none
#   FUSETRAIN_CIFAR10_JPG=...  the CIFAR-10 JPEG archive the GPU tests train on (default: the checkout's
#                  tests/data/cifar10-subset.tar.xz, made by tests/data/make_cifar10_subset.sh)
set -euo pipefail
debs=$(cd "${1:?usage: build.sh DEB_DIR [BUILD_DIR] [-- cmake args]}" && pwd)
shift
build=build
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build=$1; shift; fi
[ "${1:-}" != "--" ] || shift
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
prefix=${PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/fusetrain/gpu-deps}
lib=$prefix/usr/lib/x86_64-linux-gnu
tests=${TESTS:-host}

die() { echo "build.sh: $*" >&2; exit 1; }
# shellcheck source=tools/gpu-host/host_env.sh
source "$source_dir/tools/gpu-host/host_env.sh"

# Before the build: the data the GPU suite trains on must be there (unless no GPU tests run).
require_gpu_data() {
  local archive=${FUSETRAIN_CIFAR10_JPG:-$source_dir/tests/data/cifar10-subset.tar.xz}
  case "$tests" in host|gpu|all) ;; *) return 0 ;; esac
  [ -f "$archive" ] || die "the GPU suite needs the CIFAR-10 archive $archive: make it with" \
    "tests/data/make_cifar10_subset.sh from the JPEG release, or set FUSETRAIN_CIFAR10_JPG (or TESTS=none)"
}

# The CUDA parts this build forces on: nvcc, a torch built for CUDA, and pip's NCCL beside it.
require_cuda_parts() {
  command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
    die "no nvcc on PATH or in /usr/local/cuda/bin: this build needs the CUDA toolkit (-DFUSETRAIN_CUDA=ON)"
  "$FUSETRAIN_PYTHON" -c 'import sys, torch; sys.exit(torch.version.cuda is None)' ||
    die "$FUSETRAIN_PYTHON's torch is not a CUDA build: install the CUDA build of PyTorch"
  if [ ! -f "$FUSETRAIN_NCCL_DIR/include/nccl.h" ] || [ ! -f "$FUSETRAIN_NCCL_DIR/lib/libnccl.so.2" ]; then
    die "no NCCL in $FUSETRAIN_NCCL_DIR (include/nccl.h, lib/libnccl.so.2): install pip's nvidia-nccl" \
      "package beside torch (-DFUSETRAIN_NCCL=ON)"
  fi
}

configure() {
  local arch
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -n 1 | tr -d '.') || true
  cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON \
    -DFUSETRAIN_PYTHON="$FUSETRAIN_PYTHON" -DCMAKE_CUDA_ARCHITECTURES="${arch:-90}" \
    -DMPI_C_COMPILER="$prefix/usr/bin/mpicc.openmpi" \
    -DHDF5_C_INCLUDE_DIR="$prefix/usr/include/hdf5/serial" -DHDF5_C_LIBRARY_hdf5="$lib/hdf5/serial/libhdf5.so" \
    -DNCCL_INCLUDE_DIR="$FUSETRAIN_NCCL_DIR/include" -DNCCL_LIBRARY="$FUSETRAIN_NCCL_DIR/lib/libnccl.so.2" \
    -DPKG_CONFIG_EXECUTABLE="$prefix/usr/bin/pkgconf" "$@" -DFUSETRAIN_CUDA=ON -DFUSETRAIN_NCCL=ON
}

# run_tests: the tests TESTS names, from BUILD; every group runs, and any failure fails the script.
run_tests() (
  status=0
  cd "$build"
  case "$tests" in
    host)
      ctest -L 'gpu|linkage|mpi' --output-on-failure || status=1 ;;
    gpu) ctest -L gpu --output-on-failure || status=1 ;;
    all) ctest --output-on-failure -j "$(nproc)" || status=1 ;;
    none) ;;
  esac
  exit $status
)

case "$tests" in host|gpu|all|none) ;; *) echo "build.sh: TESTS must be host, gpu, all or none, not '$tests'" >&2; exit 2 ;; esac
require_gpu_data
unpack_debs "$debs" "$prefix"
write_env "$prefix"
# shellcheck source=/dev/null
. "$prefix/env.sh"
require_cuda_parts
configure "$@"
# shellcheck disable=SC2086  # TARGETS is a list
cmake --build "$build" -j "$(nproc)" ${TARGETS:+--target $TARGETS}
echo "build.sh: built in $build; run programs after '. $prefix/env.sh'"
run_tests
