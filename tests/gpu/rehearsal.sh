#!/usr/bin/env bash
# The GPU host rehearsed on this CPU machine: this build's bundle (tools/gpu-host/bundle.sh; made once and
# kept while the build is unchanged) and a fresh copy of the checkout's files, checked in a mount namespace
# that hides this machine's build and source folders, its Open MPI (/usr/bin/mpirun), HDF5, Gloo, yaml-cpp
# and Boost libraries and what a GPU host lacks (h5dump, gdb, Slurm, Debian's data sets): only what the
# bundle carries and the torch environment remain. rehearsal_inside.sh runs the checks in there and scans
# what they unpacked and wrote for this machine's folders and tools, naming each file and path.
# Skips (77) where no mount namespace can be made, the .deb files cannot be fetched, or the build has no CUDA.
# usage: rehearsal.sh (FUSETRAIN_BIN, FUSETRAIN_SOURCE, FUSETRAIN_TMP, FUSETRAIN_PYTHON as for the suite)
#   REHEARSAL_KEEP=1  keep the fresh folder (its path is printed) for a look after the run; otherwise what
#                     the checks unpack and write lives in memory (tmpfs) and goes with the namespace
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/failure/lib.sh
source "$here/../failure/lib.sh"
: "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_PYTHON:?}"
CASE=rehearsal
source_dir=$(cd "$FUSETRAIN_SOURCE" && pwd)
build=$(cd "$FUSETRAIN_BIN/.." && pwd)
cache=${FUSETRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fusetrain}
bundle=$(cd "$WORK/.." && pwd)/rehearsal-bundle  # beside the test's folder: kept across runs
started=$(date +%s)

skip() { echo "SKIP: $*"; exit 77; }
took() { echo "rehearsal: $1 in $(($(date +%s) - $2)) s"; }

# How a mount namespace is made here: as root, or as a user through a user namespace; else none (skip).
namespace_command() {
  if unshare --mount true 2> /dev/null; then
    echo "unshare --mount"
  elif unshare --user --map-root-user --mount true 2> /dev/null; then
    echo "unshare --user --map-root-user --mount"
  else
    return 1
  fi
}

# The .deb files a GPU host is carried, fetched once per machine (fetch-debs.sh).
fetched_debs() {
  local debs=$cache/gpu-debs
  if ! ls "$debs"/*.deb > /dev/null 2>&1; then
    mkdir -p "$debs"
    timeout 300 bash "$source_dir/tools/gpu-host/fetch-debs.sh" "$debs" > "$WORK/fetch-debs.log" 2>&1 ||
      { rm -f "$debs"/*.deb; skip "the .deb files cannot be fetched: $(tail -n 1 "$WORK/fetch-debs.log")"; }
  fi
  echo "$debs"
}

# The fresh folder: the checkout's files as a device call sends them (tracked, and untracked that git does
# not ignore); the bundle is mounted as carried, in .gpu/, inside the namespace.
fresh_checkout() {
  mkdir -p "$fresh/checkout/.gpu"
  git -C "$source_dir" ls-files -z --cached --others --exclude-standard |
    tar -C "$source_dir" --null -T - --ignore-failed-read -cf - 2> /dev/null | tar -C "$fresh/checkout" -xf -
  : > "$fresh/empty"
}

# What the namespace hides, one path a line: the build and source folders, Open MPI's, HDF5's and PMIx's
# folders, every file of the Open MPI, HDF5, Gloo, yaml-cpp and Boost packages in /usr/lib and /usr/bin, the
# tools a GPU host lacks, and Debian's data sets.
hidden_paths() {
  local dir tool pkg file
  printf '%s\n' "$build" "$source_dir"
  for dir in /usr/lib/x86_64-linux-gnu/{openmpi,pmix2,hdf5} /usr/share/openmpi /etc/openmpi /usr/share/datasets; do
    [ ! -d "$dir" ] || echo "$dir"
  done
  for pkg in $(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' 'libopenmpi*' 'openmpi-*' 'libpmix*' \
                 'libhdf5-*' 'libgloo*' 'libyaml-cpp*' 'libboost-program-options*' hdf5-tools gdb 'slurm*' \
                 2> /dev/null | awk '$1 == "ii" { print $2 }'); do
    dpkg -L "$pkg" | while IFS= read -r file; do
      if [[ "$file" == /usr/lib/* || "$file" == /usr/bin/* ]] && [ -f "$file" ] && [ ! -L "$file" ]; then echo "$file"; fi
    done
  done
  for tool in mpirun mpiexec orterun h5dump gdb srun sbatch; do
    ! command -v "$tool" > /dev/null || readlink -f "$(command -v "$tool")"
  done
}

# The checks and the scan inside the namespace (rehearsal_inside.sh, from the fresh checkout).
rehearse() {
  local ns start
  ns=$(namespace_command)
  hidden_paths | sort -u > "$fresh/hidden"
  start=$(date +%s)
  # shellcheck disable=SC2086  # the namespace command is words
  run_case inside 420 env FRESH="$fresh" BUNDLE_DIR="$bundle" CPU_SOURCE="$source_dir" CPU_BUILD="$build" \
    FUSETRAIN_PYTHON="$FUSETRAIN_PYTHON" REHEARSAL_KEEP="${REHEARSAL_KEEP:-}" \
    $ns bash "$fresh/checkout/tests/gpu/rehearsal_inside.sh"
  cat "$OUT"
  took "the checks in the namespace" "$start"
  expect_status 0
}

info=$("$FUSETRAIN_BIN/fusetrain" info 2>&1) || ft_fail "fusetrain info failed: $info"
grep -q '^CUDA kernels: built' <<< "$info" || skip "this build has no CUDA kernels: there is no GPU bundle to rehearse"
namespace_command > /dev/null || skip "no mount namespace can be made here (unshare --mount fails, as root and" \
  "through a user namespace)"
git -C "$source_dir" rev-parse --git-dir > /dev/null 2>&1 ||
  skip "$source_dir is not a git checkout: the rehearsal copies the files git would send"
debs=$(fetched_debs)
start=$(date +%s)
# xz -1: this bundle is not carried anywhere, and -6 takes 6 times as long
run_case bundle 300 env BUILD="$build" DEBS="$debs" XZ_LEVEL=1 bash "$source_dir/tools/gpu-host/bundle.sh" "$bundle"
expect_status 0
took "bundle.sh ($(grep -c 'already this build' "$OUT" | sed 's/^1$/kept/;s/^0$/made/'))" "$start"
fresh=$(mktemp -d /tmp/fusetrain-rehearsal.XXXXXX)
case "$fresh/" in "$build"/*|"$source_dir"/*) ft_fail "the fresh folder $fresh lies in a folder the rehearsal hides" ;; esac
[ -n "${REHEARSAL_KEEP:-}" ] || trap 'cleanup_jobs; rm -rf "$fresh"' EXIT
fresh_checkout
rehearse
took "the rehearsal (fresh folder $fresh)" "$started"
echo "PASS: the GPU host rehearsed: its bundle unpacked, run and scanned where this machine's folders and libraries are hidden"
