#!/usr/bin/env bash
# Packs on the CPU machine what a GPU host's check needs (tools/gpu-host/device_check.sh): a CUDA build's
# programs, test binaries and ctest tree, and the Debian packages the host lacks. It names no folder of this
# machine: the ctest files' source and build paths become @FUSETRAIN_SOURCE@ and @FUSETRAIN_BUILD@, which the
# unpack stage replaces with the host's (the binaries take their folders from ctest's environment).
#
# usage: tools/gpu-host/bundle.sh OUT_DIR
#   BUILD=DIR      the CUDA build to pack [build]; configured (CUDA architectures 90) and built first when it
#                  is not yet a CUDA build with its tests
#   DEBS=DIR|none  the .deb files to carry [fetched once with fetch-debs.sh into OUT_DIR/debs]; none: no debs
#   LIMIT_MIB=N    the most OUT_DIR may hold [44: a device call carries 64 MiB, 20 stay free for the CIFAR-10
#                  JPEG archive of the speed set]
#   AIRBENCH_REPO=DIR  a checkout (or git directory) of github.com/KellerJordan/cifar10-airbench: its
#                  airbench94_muon.py is carried as OUT_DIR/airbench/airbench94_muon.py, for the speed set to run
#                  unchanged beside the Muon recipe (never committed here) [unset: the speed set runs without it]
#   XZ_LEVEL=N     xz's preset for bundle.tar.xz [6: 3.8 MiB in 13 s on 2 cores, against 6.1 MiB in 2 s at 1; a
#                  device call carries the checkout, the .deb files and the CIFAR-10 archive too, near 64 MiB]
# OUT_DIR then holds bundle.tar.xz (stripped binaries and ctest files), bundle.info, debs/ and airbench/
# (the airbench package's source, found through FUSETRAIN_PYTHON [python3], and airbench94_muon.py). The checkout itself (tests,
# tools, configs) travels with every device call; the bundle holds only what is built. A bundle in OUT_DIR
# made from the same files of the same build by the same bundle.sh is kept, not made again.
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

# The build's files a check runs, NUL-separated: every ELF executable under bin/ and tests/ (not the
# ThreadSanitizer build nor the fuzzers' probe, targets and work folder: CPU tests that fuzz.build makes inside
# the build, naming its folders), and the ctest tree (CTestTestfile.cmake and the files it includes:
# GoogleTest's lists, the unit tests' environment).
build_files() {
  find "$build" -path '*/CMakeFiles' -prune -o -path "$build/tests/data" -prune \
    -o -path "$build/tests/tsan/engine_threads_tsan" -prune -o -path "$build/tests/fuzz/probe" -prune \
    -o -path "$build/tests/fuzz/targets" -prune -o -path "$build/tests/fuzz/work" -prune -o -type f \
    \( -name CTestTestfile.cmake -o \( -path "$build/tests/*" -name '*.cmake' ! -name cmake_install.cmake \) \
       -o \( -perm -u+x \( -path "$build/bin/*" -o -path "$build/tests/*" \) \) \) -print0
}

# The files copied into the stage: executables stripped, ctest files with this machine's build and source
# folders replaced by placeholders (the build first: it may lie inside the source).
stage_build() {
  local stage=$1 file rel
  while IFS= read -r -d '' file; do
    rel=${file#"$build"/}
    mkdir -p "$stage/$(dirname "$rel")"
    if [ "$(head -c 4 "$file" | od -An -c | tr -d ' ')" = '177ELF' ]; then
      strip --strip-unneeded -o "$stage/$rel" "$file"
    else
      sed -e "s|$(literal "$build")|@FUSETRAIN_BUILD@|g" -e "s|$(literal "$source_dir")|@FUSETRAIN_SOURCE@|g" "$file" \
        > "$stage/$rel"
    fi
  done < <(build_files)
}

# literal TEXT: TEXT as a sed pattern that matches it alone.
# shellcheck disable=SC2001  # a set of characters, which ${var//x/y} cannot replace at once
literal() { sed 's/[][\\.*^$|]/\\&/g' <<< "$1"; }

# What the bundle is made of: each file's name, size and time, and this script, hashed.
fingerprint() {
  {
    build_files | xargs -0 stat -c '%n %s %Y' | sort
    sha256sum < "$source_dir/tools/gpu-host/bundle.sh"
    echo "xz ${XZ_LEVEL:-6}"
  } | sha256sum | cut -c1-16
}

# What device_check.sh reads: the build's name (the unpacked build's folder in the host's checkout), that
# paths are placeholders, and what the bundle was made from. No folder of this machine.
write_info() {
  local commit
  commit=$(git -C "$source_dir" rev-parse HEAD 2> /dev/null || echo unknown)
  git -C "$source_dir" diff --quiet HEAD 2> /dev/null || commit="$commit (with uncommitted changes)"
  cat > "$out/bundle.info" <<INFO
build_name=$(basename "$build")
paths=placeholders
commit=$commit
made_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cuda_architectures=$(cuda_architectures)
fingerprint=$1
INFO
}

# bundle.tar.xz and bundle.info, unless OUT_DIR's are of this very build (the same fingerprint).
pack() {
  local stage print
  print=$(fingerprint)
  if [ -f "$out/bundle.tar.xz" ] && grep -qx "fingerprint=$print" "$out/bundle.info" 2> /dev/null; then
    echo "bundle.sh: $out/bundle.tar.xz is already this build's: kept"
    return 0
  fi
  stage=$(mktemp -d)
  stage_build "$stage"
  tar -C "$stage" -cf - . | xz -T0 "-${XZ_LEVEL:-6}" > "$out/bundle.tar.xz.partial"
  rm -rf "$stage"
  mv "$out/bundle.tar.xz.partial" "$out/bundle.tar.xz"
  write_info "$print"
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

# The public airbench94_muon.py, from AIRBENCH_REPO's files or its git history (HEAD).
carry_airbench_muon() {
  local repo=${AIRBENCH_REPO:-} target=$out/airbench/airbench94_muon.py
  if [ -z "$repo" ]; then
    echo "bundle.sh: AIRBENCH_REPO is not set: the speed set will run without airbench94_muon" >&2
    return 0
  fi
  mkdir -p "$out/airbench"
  if [ -f "$repo/airbench94_muon.py" ]; then
    cp "$repo/airbench94_muon.py" "$target.partial"
  else
    git -C "$repo" show HEAD:airbench94_muon.py > "$target.partial" 2> /dev/null ||
      die "AIRBENCH_REPO=$repo holds no airbench94_muon.py (a checkout or git directory of KellerJordan/cifar10-airbench)"
  fi
  mv "$target.partial" "$target"
}

ensure_cuda_build
mkdir -p "$out"
out=$(cd "$out" && pwd)
pack
carry_debs
carry_airbench
carry_airbench_muon
bytes=$(du -sb "$out" | cut -f1)
echo "bundle.sh: $out holds $((bytes / 1048576)) MiB: bundle.tar.xz $(($(stat -c %s "$out/bundle.tar.xz") / 1048576)) MiB" \
  "($(tar -tJf "$out/bundle.tar.xz" | grep -vc '/$') files from $build), $(find "$out/debs" -name '*.deb' 2> /dev/null | wc -l) .deb files"
[ "$bytes" -le $((limit_mib * 1048576)) ] ||
  die "$out holds $((bytes / 1048576)) MiB, more than LIMIT_MIB=$limit_mib (a device call carries 64 MiB in all)"
