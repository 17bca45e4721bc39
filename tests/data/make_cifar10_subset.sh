#!/usr/bin/env bash
# Makes cifar10-subset.tar.xz, the small real CIFAR-10 the GPU suite trains on, from the JPEG release:
# the first TRAIN and TEST files by name of every class, in the release's layout, packed reproducibly.
#
# usage: tests/data/make_cifar10_subset.sh [ARCHIVE] [OUTPUT]
#   ARCHIVE  the full release, cifar10-jpg/{train,test}/<class>/NNNN.jpg (default: beside the checkout,
#            ../shared/data/cifar10-jpg.tar.xz)
#   OUTPUT   default tests/data/cifar10-subset.tar.xz
#   TRAIN=500 TEST=100  images per class and split
# The same archive and tools give the same bytes: names sorted, owner, mode and time fixed, xz on one
# thread.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
archive=${1:-$here/../../../shared/data/cifar10-jpg.tar.xz}
output=${2:-$here/cifar10-subset.tar.xz}
per_class=(train "${TRAIN:-500}" test "${TEST:-100}")
fail() { echo "make_cifar10_subset: $*" >&2; exit 1; }

[ -f "$archive" ] || fail "$archive: no such archive (give the CIFAR-10 JPEG release as ARCHIVE)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$archive" -C "$tmp" || fail "$archive: cannot unpack"

# select SPLIT COUNT: the first COUNT file names of each class folder of SPLIT, relative to $tmp.
select_files() {
  local split=$1 count=$2 dir class
  dir=$tmp/cifar10-jpg/$split
  [ -d "$dir" ] || fail "$archive: has no cifar10-jpg/$split folder"
  for class in $(cd "$dir" && LC_ALL=C ls -1); do
    [ "$(find "$dir/$class" -maxdepth 1 -name '*.jpg' | wc -l)" -ge "$count" ] ||
      fail "$archive: cifar10-jpg/$split/$class holds fewer than $count JPEG files"
    (cd "$tmp" && find "cifar10-jpg/$split/$class" -maxdepth 1 -name '*.jpg' | LC_ALL=C sort | awk -v n="$count" 'NR <= n')
  done
}

for ((i = 0; i < ${#per_class[@]}; i += 2)); do select_files "${per_class[i]}" "${per_class[i + 1]}"; done > "$tmp/list"
tar -C "$tmp" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=u=rw,go=r --format=gnu \
  -cf - -T "$tmp/list" | xz -9e -T1 > "$output.partial"
mv "$output.partial" "$output"
echo "make_cifar10_subset: $(wc -l < "$tmp/list") images, $(stat -c %s "$output") bytes, sha256 $(sha256sum "$output" | cut -d' ' -f1): $output"
