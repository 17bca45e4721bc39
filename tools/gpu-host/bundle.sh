#!/usr/bin/env bash
# Packs on the CPU machine what a GPU host's check needs (tools/gpu-host/device_check.sh): a CUDA build's
# programs, test binaries and ctest tree, the Debian packages the host lacks, and where they were built.
#
# usage: tools/gpu-host/bundle.sh OUT_DIR
#   BUILD=DIR      the CUDA build to pack [build]; configured (CUDA architectures 90) and built first when it
#                  is not yet a CUDA build with its tests
#   DEBS=DIR|none  the .deb files to carry [fetched once with fetch-debs.sh into OUT_DIR/debs]; none: no debs
#   LIMIT_MIB=N    the most OUT_DIR may hold [44: a device call carries 64 MiB, 20 stay free for the CIFAR-10
#                  JPEG archive of the speed set]
# OUT_DIR then holds bundle.tar.xz (stripped binaries and ctest files), bundle.info, debs/ and airbench/
# (the airbench package's source, found through FUSETRAIN_PYTHON [python3]). The checkout itself (tests,
# tools, configs) travels with every device call; the bundle holds only what is built.
set -euo pipefail
out=${1:?usage: bundle.sh OUT_DIR}
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-build}
[[ "$build" = /* ]] || build=$source_dir/$build
limit_mib=${LIMIT_MIB:-44}
die() { echo "bundle.sh: $*" >&2; exit 1; }

# The CUDA architectures the build compiles its kernels for, from nvcc's flags in build.ninja.
cuda_architectures() {
  grep -o 'arch=compute_[0-9]*,code=[^ ]*sm_[0-9]*' "$build/build.ninja" 2> /dev/null | sed 's/.*sm_//' | sort -un |
    paste -sd ' ' -
}

# A CUDA build with its tests, for sm_90 among its architectures; built here when it is not one yet.
ensure_cuda_build() {
  if [ -x "$build/bin/fusetrain" ] && [ -x "$build/tests/unit/unit_tests" ] &&
     "$build/bin/fusetrain" info 2> /dev/null | grep -q '^CUDA kernels: built'; then
    cuda_architectures | grep -qw 90 ||
      die "$build is not built for sm_90 (its kernels are for: $(cuda_architectures)): H100 and H200 need it"
    return 0
  fi
  command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] || die "no nvcc: a GPU bundle needs the CUDA toolkit"
  cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON \
    -DFUSETRAIN_CUDA=ON -DFUSETRAIN_NCCL=ON -DCMAKE_CUDA_ARCHITECTURES=90
  cmake --build "$build" -j "$(nproc)"
}

# The build's files a check runs: every ELF executable under bin/ and tests/ (stripped; not the
# ThreadSanitizer build, a CPU test), and the ctest tree (CTestTestfile.cmake and GoogleTest's lists).
stage_build() {
  local stage=$1 file rel
  while IFS= read -r -d '' file; do
    rel=${file#"$build"/}
    mkdir -p "$stage/$(dirname "$rel")"
    if [ "$(head -c 4 "$file" | od -An -c | tr -d ' ')" = '177ELF' ]; then
      strip --strip-unneeded -o "$stage/$rel" "$file"
    else
      cp "$file" "$stage/$rel"
    fi
  done < <(find "$build" -path '*/CMakeFiles' -prune -o -path "$build/tests/data" -prune \
             -o -path "$build/tests/tsan/engine_threads_tsan" -prune -o -type f \
             \( -name CTestTestfile.cmake -o -name '*_tests.cmake' -o -name '*_include.cmake' \
                -o \( -perm -u+x \( -path "$build/bin/*" -o -path "$build/tests/*" \) \) \) -print0)
}

write_info() {
  local commit
  commit=$(git -C "$source_dir" rev-parse HEAD 2> /dev/null || echo unknown)
  git -C "$source_dir" diff --quiet HEAD 2> /dev/null || commit="$commit (with uncommitted changes)"
  cat > "$out/bundle.info" <<INFO
source_dir=$source_dir
build_dir=$build
build_name=$(basename "$build")
commit=$commit
made_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cuda_architectures=$(cuda_architectures)
INFO
}

carry_debs() {
  case "${DEBS:-}" in
    none) return 0 ;;
    "") if ! ls "$out"/debs/*.deb > /dev/null 2>&1; then bash "$source_dir/tools/gpu-host/fetch-debs.sh" "$out/debs"; fi ;;
    *) [ "$(cd "$DEBS" && pwd)" = "$(mkdir -p "$out/debs" && cd "$out/debs" && pwd)" ] || cp "$DEBS"/*.deb "$out/debs/" ;;
  esac
}

# airbench's source (pure Python, from the Python that has it), so the speed set can run the public
# airbench94 beside fusetrain on a host that cannot reach PyPI.
carry_airbench() {
  local package
  package=$("${FUSETRAIN_PYTHON:-python3}" -c 'import importlib.util as u; print(u.find_spec("airbench").submodule_search_locations[0])' \
    2> /dev/null) || { echo "bundle.sh: ${FUSETRAIN_PYTHON:-python3} has no airbench (tools/setup.sh installs it):" \
                         "the speed set will run without airbench94" >&2; return 0; }
  rm -rf "$out/airbench" && mkdir -p "$out/airbench/airbench"
  cp "$package"/*.py "$out/airbench/airbench/"
}

ensure_cuda_build
mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
stage_build "$stage"
tar -C "$stage" -cf - . | xz -T0 -6 > "$out/bundle.tar.xz.partial"
mv "$out/bundle.tar.xz.partial" "$out/bundle.tar.xz"
write_info
carry_debs
carry_airbench
bytes=$(du -sb "$out" | cut -f1)
echo "bundle.sh: $out holds $((bytes / 1048576)) MiB: bundle.tar.xz $(($(stat -c %s "$out/bundle.tar.xz") / 1048576)) MiB" \
  "($(tar -tJf "$out/bundle.tar.xz" | grep -vc '/$') files from $build), $(find "$out/debs" -name '*.deb' 2> /dev/null | wc -l) .deb files"
[ "$bytes" -le $((limit_mib * 1048576)) ] ||
  die "$out holds $((bytes / 1048576)) MiB, more than LIMIT_MIB=$limit_mib (a device call carries 64 MiB in all)"
