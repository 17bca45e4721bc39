#!/usr/bin/env bash
# Carrying a data archive in parts (tools/gpu-host/data_split.sh and data_assemble.sh), rehearsed on a small
# synthetic CIFAR-10 binary release: the split refuses an archive that is not the README's, plans the calls so
# that each carries at most its limit (the last with the bundle), and the host side puts the parts back into
# the very same bytes and makes shards of them with fusetrain-prep; a part missing, damaged on the way or
# damaged in the store, and a whole that is not the README's, are refused naming the part and its call.
# usage: data_parts_check.sh (FUSETRAIN_BIN, FUSETRAIN_SOURCE, FUSETRAIN_TMP as for the suite)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/failure/lib.sh
source "$here/../failure/lib.sh"
: "${FUSETRAIN_SOURCE:?}"
tools=$FUSETRAIN_SOURCE/tools/gpu-host
mib=1048576

# A CIFAR-10 binary release of 6 x 300 random records (5.3 MiB) and a 2.2 MiB stand-in for the bundle.
make_release() {
  bash "$here/make_cifar_bin.sh" "$WORK" 300
  mkdir -p "$WORK/bundle" && head -c $((22 * mib / 10)) /dev/urandom > "$WORK/bundle/bundle.tar.xz"
}

# Calls of 4 MiB with nothing else in them, the 2.2 MiB bundle in the last: parts of 1.97 MiB (half a call less
# the manifest's room), two in the first call and the third, the shorter rest (1.4 MiB), beside the bundle,
# where a whole part would not fit.
split_env=(env LIMIT_MIB=4 MARGIN_MIB=0 CHECKOUT_BYTES=0 BUNDLE="$WORK/bundle")

split_plans_calls_under_the_limit() {
  run_case split 120 "${split_env[@]}" bash "$tools/data_split.sh" "$WORK/cifar10-bin.tar.xz" "$WORK/parts"
  expect_status 0
  expect_message '^call 1: carry \[".*/parts/call1"\], parts 1 2, '
  expect_message '^call 2: carry \[".*/bundle", ".*/parts/call2"\], parts 3, '
  expect_message 'data_assemble\.sh stash .*/parts/call2 && .*device_check\.sh'
  [ "$(find "$WORK/parts" -name 'part[0-9]*' | wc -l)" -eq 3 ] || ft_fail "not 3 parts"
  local call size
  for call in "$WORK"/parts/call*; do
    size=$(du -sb "$call" | cut -f1)
    [ "$call" != "$WORK/parts/call2" ] || size=$((size + $(du -sb "$WORK/bundle" | cut -f1)))
    [ "$size" -le $((4 * mib)) ] || ft_fail "$call carries $size bytes, more than the 4 MiB limit"
    cmp -s "$call/manifest.txt" "$WORK/parts/call1/manifest.txt" || ft_fail "$call has another manifest"
  done
  grep -qx "sha256=$(sha256sum < "$WORK/cifar10-bin.tar.xz" | cut -d' ' -f1)" "$WORK/parts/call1/manifest.txt" ||
    ft_fail "the manifest does not hold the archive's sha256"
  cat "$WORK/parts/call1/part01" "$WORK/parts/call1/part02" "$WORK/parts/call2/part03" |
    cmp -s - "$WORK/cifar10-bin.tar.xz" || ft_fail "the parts in order are not the archive"
  pass
}

split_refuses_another_archive() {
  run_case split_wrong_sha 60 "${split_env[@]}" SHA256="$(printf '0%.0s' {1..64})" bash "$tools/data_split.sh" \
    "$WORK/cifar10-bin.tar.xz" "$WORK/parts-wrong"
  expect_status 1
  expect_message 'its sha256 is not 0{64}'
  expect_absent "$WORK/parts-wrong"
  pass
}

# The host: two calls, each stashing what it carried; the archive assembled only once every part is there.
stash_then_assemble() {
  local store=$WORK/store
  run_case stash_call1 60 bash "$tools/data_assemble.sh" stash "$WORK/parts/call1" "$store"
  expect_status 0
  expect_message 'has part\(s\) 01 02 of 3; missing: 03 \(call2\)'
  run_case assemble_too_early 60 bash "$tools/data_assemble.sh" assemble "$store" "$WORK/host/cifar10-bin.tar.xz"
  expect_status 1
  expect_message 'part 03 \(carried by call2\) is missing'
  expect_absent "$WORK/host/cifar10-bin.tar.xz"
  run_case stash_call2 60 bash "$tools/data_assemble.sh" stash "$WORK/parts/call2" "$store"
  expect_status 0
  expect_message 'has part\(s\) 01 02 03 of 3$'
  run_case assemble 120 env FUSETRAIN_PREP="$FUSETRAIN_BIN/fusetrain-prep" bash "$tools/data_assemble.sh" assemble \
    "$store" "$WORK/host/cifar10-bin.tar.xz" "$WORK/host/shards"
  expect_status 0
  expect_message 'cifar10-bin\.tar\.xz: 3 parts, [0-9]+ bytes, sha256 [0-9a-f]{64} verified'
  cmp -s "$WORK/host/cifar10-bin.tar.xz" "$WORK/cifar10-bin.tar.xz" || ft_fail "the assembled archive differs"
  "$FT" inspect "$WORK/host/shards/train-00000-of-00001.h5" | grep -q '^/images \[1500, 32, 32, 3\]$' ||
    ft_fail "the shards do not hold the 1500 training images"
  expect_absent "$WORK/host/shards.unpacked"
  pass
}

# damaged COPY PART: a copy of the store (or call folder) with one byte of PART changed.
damaged() {
  rm -rf "$1" && cp -r "$2" "$1"
  printf 'X' | dd of="$1/$3" bs=1 seek=1000 conv=notrunc 2> /dev/null
}

damaged_or_missing_parts_are_named() {
  damaged "$WORK/call1-damaged" "$WORK/parts/call1" part02
  run_case stash_damaged 60 bash "$tools/data_assemble.sh" stash "$WORK/call1-damaged" "$WORK/store2"
  expect_status 1
  expect_message 'part 02 \(carried by call1\) is damaged: sha256 [0-9a-f]{64} in .*call1-damaged, the manifest says'
  expect_absent "$WORK/store2/part02"

  damaged "$WORK/store-damaged" "$WORK/store" part01
  run_case assemble_damaged 60 bash "$tools/data_assemble.sh" assemble "$WORK/store-damaged" "$WORK/out/a.tar.xz"
  expect_status 1
  expect_message 'part 01 \(carried by call1\) is damaged'
  expect_absent "$WORK/out/a.tar.xz"

  rm -rf "$WORK/store-short" && cp -r "$WORK/store" "$WORK/store-short" && head -c 100 "$WORK/store/part03" > "$WORK/store-short/part03"
  run_case assemble_truncated 60 bash "$tools/data_assemble.sh" assemble "$WORK/store-short" "$WORK/out/a.tar.xz"
  expect_status 1
  expect_message 'part 03 \(carried by call2\) is damaged: 100 bytes in .*, the manifest says [0-9]+'

  rm -rf "$WORK/store-gap" && cp -r "$WORK/store" "$WORK/store-gap" && rm "$WORK/store-gap/part01"
  run_case assemble_missing 60 bash "$tools/data_assemble.sh" assemble "$WORK/store-gap" "$WORK/out/a.tar.xz"
  expect_status 1
  expect_message 'part 01 \(carried by call1\) is missing'
  pass
}

# Parts that each match the manifest but a whole that is not the README's (a manifest edited by hand), and a
# store holding another split's parts, emptied by the next stash.
wrong_whole_and_stale_store() {
  rm -rf "$WORK/store-edited" && cp -r "$WORK/store" "$WORK/store-edited"
  sed -i "s/^sha256=.*/sha256=$(printf 'f%.0s' {1..64})/" "$WORK/store-edited/manifest.txt"
  run_case assemble_wrong_whole 60 bash "$tools/data_assemble.sh" assemble "$WORK/store-edited" "$WORK/out/b.tar.xz"
  expect_status 1
  expect_message 'the parts put together have sha256 [0-9a-f]{64}, not f{64}'
  expect_absent "$WORK/out/b.tar.xz"
  run_case stash_stale 60 bash "$tools/data_assemble.sh" stash "$WORK/parts/call2" "$WORK/store-edited"
  expect_status 0
  expect_message 'held the parts of another split'
  expect_message 'has part\(s\) 03 of 3; missing: 01 \(call1\) 02 \(call1\)'
  pass
}

make_release
check split_plans_calls_under_the_limit
check split_refuses_another_archive
check stash_then_assemble
check damaged_or_missing_parts_are_named
check wrong_whole_and_stale_store
finish "data parts"
