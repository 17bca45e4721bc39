#!/usr/bin/env bash
# Builds fusetrain and its tests on a bare GPU host (CUDA with nvcc, CMake, Ninja and a Python whose
# torch is a CUDA build; no root, no package registry) from the .deb files of fetch-debs.sh, then runs
# the tests a GPU host is for. Everything lands under PREFIX (unpacked libraries, env.sh) and BUILD.
# The build always has the CUDA kernels and NCCL (-DFUSETRAIN_CUDA=ON -DFUSETRAIN_NCCL=ON, after any extra
# cmake arguments): where nvcc, a CUDA torch or pip's NCCL is missing it stops, naming it.
#
# usage: tools/gpu-host/build.sh DEB_DIR [BUILD_DIR] [-- extra cmake arguments]
#   PREFIX=...     where the packages are unpacked (default ~/.cache/fusetrain/gpu-deps)
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

unpack() {
  mkdir -p "$prefix"
  local deb
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
  ln -sf orterun "$prefix/usr/bin/mpirun"
  ln -sf orterun "$prefix/usr/bin/mpiexec"
  local wrapper
  for wrapper in mpicc mpicxx; do [ -e "$prefix/usr/bin/$wrapper" ] || ln -sf "$wrapper.openmpi" "$prefix/usr/bin/$wrapper"; done
  # Gloo's CMake package names /usr/lib/libgloo.so: without it the build's find_library fallback
  # finds the unpacked library. The .pc files name prefix=/usr.
  rm -rf "$prefix/usr/share/cmake/Gloo"
  sed -i "s|=/usr|=$prefix/usr|" "$lib"/pkgconfig/*.pc "$prefix"/usr/share/pkgconfig/*.pc 2> /dev/null || true
}

# env.sh: what the programs built here (and mpirun) need at run time; sourced here and by users.
write_env() {
  local python site libs dir
  python=$(command -v python3)
  site=$("$python" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))') ||
    die "$python has no torch: install the CUDA build of PyTorch"
  libs=$lib:$lib/openmpi/lib:$lib/pmix2/lib:$lib/hdf5/serial:$prefix/usr/lib:$site/torch/lib:/usr/local/cuda/lib64
  for dir in "$site"/nvidia/*/lib; do libs=$libs:$dir; done
  cat > "$prefix/env.sh" <<ENV
export OPAL_PREFIX=$prefix/usr OPAL_LIBDIR=$lib/openmpi/lib OPAL_DATADIR=$prefix/usr/share/openmpi
export OPAL_PKGDATADIR=$prefix/usr/share/openmpi OPAL_SYSCONFDIR=$prefix/etc/openmpi
export OPAL_INCLUDEDIR=$lib/openmpi/include PMIX_INSTALL_PREFIX=$prefix/usr
export PMIX_MCA_mca_base_component_path=$lib/pmix2/lib/pmix
# the host's own paths first (its driver and CUDA libraries win), then the unpacked ones
export LD_LIBRARY_PATH=\${LD_LIBRARY_PATH:+\$LD_LIBRARY_PATH:}$libs
export PATH=$prefix/usr/bin\${PATH:+:\$PATH}
export CMAKE_PREFIX_PATH=$prefix/usr:$lib/cmake\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}
export CPATH=$lib/openmpi/include:$prefix/usr/include/hdf5/serial:$prefix/usr/include\${CPATH:+:\$CPATH}
export PKG_CONFIG_PATH=$lib/pkgconfig:$prefix/usr/share/pkgconfig
export FUSETRAIN_PYTHON=$python FUSETRAIN_NCCL_DIR=$site/nvidia/nccl
# mpirun refuses root without these (containers often run as root)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ENV
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
unpack
write_env
# shellcheck source=/dev/null
. "$prefix/env.sh"
require_cuda_parts
configure "$@"
cmake --build "$build" -j "$(nproc)"
echo "build.sh: built in $build; run programs after '. $prefix/env.sh'"
run_tests
