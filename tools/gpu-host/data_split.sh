#!/usr/bin/env bash
# Splits a data archive that one device call cannot carry (the real CIFAR-10, 133 MiB, against 64 MiB a call
# with the checkout and the bundle) into parts for successive calls, on the CPU machine: the archive checked
# against its SHA-256 first, then one folder per call, each with the parts it carries and the manifest every
# call brings (each part's size and SHA-256, the whole's, which call carries which part), and plan.md, the
# calls in order. tools/gpu-host/data_assemble.sh stashes the parts on the host and puts them together there.
#
# usage: tools/gpu-host/data_split.sh ARCHIVE [OUT_DIR]        (from the checkout's root; OUT_DIR [.gpu-parts])
# Environment:
#   SHA256=HEX       the archive's SHA-256 [from the README.md beside it: the line naming the file and its sha256]
#   LIMIT_MIB=64     what one device call carries in all: the checkout, and what it names in carry
#   BUNDLE=DIR|none  the bundle folder (tools/gpu-host/bundle.sh), carried by the last call [.gpu]; none: no bundle
#   CHECKOUT_BYTES=N the checkout's own bytes in every call [measured: git's tracked and unignored files]
#   MARGIN_MIB=2     room left free in every call
#   PART_MIB=N       bytes of each part, in MiB [half of what a call without the bundle has room for]
# Exit status: 0 done, 1 a failed check (the archive's SHA-256, a bundle that leaves no room), 2 bad usage.
set -euo pipefail
archive=${1:?usage: data_split.sh ARCHIVE [OUT_DIR]}
out=${2:-.gpu-parts}
root=$(cd "$(dirname "$0")/../.." && pwd)
mib=1048576
die() { echo "data_split.sh: $*" >&2; exit "${2:-1}"; }
[ -f "$archive" ] || die "$archive: no such archive" 2
name=$(basename "$archive")

# The SHA-256 the archive must have: SHA256, or its README's line naming it ("## NAME (... sha256 HEX)").
expected_sha256() {
  local readme
  if [ -n "${SHA256:-}" ]; then echo "$SHA256"; return; fi
  readme=$(dirname "$archive")/README.md
  [ -f "$readme" ] || die "no SHA256 given and no $readme to read $name's from" 2
  grep -F "$name" "$readme" | grep -oE 'sha256 [0-9a-f]{64}' | head -n 1 | cut -d' ' -f2 |
    grep . || die "$readme names no sha256 for $name" 2
}

# Bytes the checkout itself takes in every call: tracked files and untracked ones git does not ignore.
checkout_bytes() {
  if [ -n "${CHECKOUT_BYTES:-}" ]; then echo "$CHECKOUT_BYTES"; return; fi
  (cd "$root" && git ls-files -z -co --exclude-standard | xargs -0 -r stat -c %s -- 2> /dev/null) |
    awk '{ s += $1 } END { print s + 0 }'
}

bundle_bytes() {
  case ${BUNDLE:-.gpu} in
    none) echo 0 ;;
    *) [ -d "${BUNDLE:-.gpu}" ] || die "no bundle folder ${BUNDLE:-.gpu} (make it with tools/gpu-host/bundle.sh, or BUNDLE=none)" 2
       du -sb "${BUNDLE:-.gpu}" | cut -f1 ;;
  esac
}

# plan_calls TOTAL PART ROOM LAST_ROOM: the parts each call carries, one line per call ("1 2", "3 4", "5"): the
# last call (with the bundle) takes as many of the last parts as fit in LAST_ROOM beside it ("-": none), and the
# calls before it carry the others in order, as many as fit in ROOM each.
plan_calls() {
  awk -v total="$1" -v part="$2" -v room="$3" -v last="$4" '
    function size(i) { return i < parts ? part : total - (parts - 1) * part }
    BEGIN {
      parts = int((total + part - 1) / part); per = int(room / part)
      if (per < 1) { print "no room for one part in a call" > "/dev/stderr"; exit 1 }
      for (k = 0; k < parts && tail + size(parts - k) <= last; ++k) tail += size(parts - k)
      front = parts - k
      for (first = 1; first <= front; first += per) {
        line = ""; for (i = first; i < first + per && i <= front; ++i) line = line " " i; print substr(line, 2)
      }
      line = ""; for (i = front + 1; i <= parts; ++i) line = line " " i; print (line == "" ? "-" : substr(line, 2))
    }'
}
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }

main() {
  local sha bytes checkout bundle room last part calls call parts k file
  sha=$(expected_sha256)
  bytes=$(stat -c %s "$archive")
  echo "data_split.sh: checking $archive ($bytes bytes) against sha256 $sha"
  [ "$(sha256sum < "$archive" | cut -d' ' -f1)" = "$sha" ] || die "$archive: its sha256 is not $sha (damaged or another file)"
  checkout=$(checkout_bytes)
  bundle=$(bundle_bytes)
  room=$(((${LIMIT_MIB:-64} - ${MARGIN_MIB:-2}) * mib - checkout - 65536))  # 64 KiB for the manifest
  last=$((room - bundle))
  [ "$last" -ge 0 ] || die "the bundle ($(mib "$bundle")) and the checkout ($(mib "$checkout")) leave no room in one call"
  part=$(( ${PART_MIB:-0} > 0 ? ${PART_MIB:-0} * mib : room / 2 ))
  calls=$(plan_calls "$bytes" "$part" "$room" "$last") || die "parts of $part bytes do not fit in a call of $room bytes"
  rm -rf "$out" && mkdir -p "$out/.split"
  split -b "$part" -d -a 2 --numeric-suffixes=1 "$archive" "$out/.split/part"
  write_manifest "$sha" "$bytes" "$calls" > "$out/.split/manifest.txt"
  call=0
  while read -r parts; do
    call=$((call + 1))
    mkdir -p "$out/call$call"
    cp "$out/.split/manifest.txt" "$out/call$call/"
    [ "$parts" = - ] && continue
    for k in $parts; do mv "$out/.split/part$(printf %02d "$k")" "$out/call$call/"; done
  done <<< "$calls"
  rm -rf "$out/.split"
  write_plan "$calls" "$checkout" "$bundle" > "$out/plan.md"
  cat "$out/plan.md"
}

# The manifest: the whole archive (name, bytes, sha256), then per part its number, bytes, sha256 and call.
write_manifest() {
  local sha=$1 bytes=$2 calls=$3 call=0 parts k file
  echo "# data parts of one archive, made by tools/gpu-host/data_split.sh; read by tools/gpu-host/data_assemble.sh"
  echo "name=$name"
  echo "bytes=$bytes"
  echo "sha256=$sha"
  echo "parts=$(find "$out/.split" -name 'part[0-9]*' | wc -l)"
  echo "calls=$(wc -l <<< "$calls")"
  while read -r parts; do
    call=$((call + 1))
    [ "$parts" = - ] && continue
    for k in $parts; do
      file=$out/.split/part$(printf %02d "$k")
      echo "part $(printf %02d "$k") $(stat -c %s "$file") $(sha256sum < "$file" | cut -d' ' -f1) call$call"
    done
  done <<< "$calls"
}

# The calls in order: what each carries (paths from the checkout's root) and runs, and its size with the checkout.
write_plan() {
  local calls=$1 checkout=$2 bundle=$3 call=0 n parts size carry dir bundle_dir
  dir=$(realpath -m --relative-to="$root" "$out")
  bundle_dir=$(realpath -m --relative-to="$root" "${BUNDLE:-.gpu}")
  n=$(wc -l <<< "$calls")
  echo "# Carrying $name in $n device calls"
  echo
  echo "Each call carries the checkout ($(mib "$checkout")) and the paths below; the host must stay up between"
  echo "them (a call within ~30 s of the last). Every call stashes its parts in /tmp/fusetrain-data (DATA_STORE) and"
  echo "says which are still missing; the last one carries the bundle, assembles the archive there (checked"
  echo "against sha256 $(grep -m1 '^sha256=' "$out/call1/manifest.txt" | cut -d= -f2)) and makes the shards."
  echo
  while read -r parts; do
    call=$((call + 1))
    size=$(du -sb "$out/call$call" | cut -f1)
    carry="\"$dir/call$call\""
    if [ "$call" = "$n" ] && [ "${BUNDLE:-.gpu}" != none ]; then
      carry="\"$bundle_dir\", $carry" size=$((size + bundle))
    fi
    echo "call $call: carry [$carry], parts ${parts/-/none}, $(mib $((size + checkout))) with the checkout"
    if [ "$call" = "$n" ]; then
      echo "    bash tools/gpu-host/data_assemble.sh stash $dir/call$call && STAGES=\"probe unpack data cases speed\" CASES=gpu.cuda_kernels ROWS=\"fast_pick fast_vs_airbench\" SEEDS=5 BUDGET_S=500 bash tools/gpu-host/device_check.sh $bundle_dir \"\$OUT\""
      echo "call $((call + 1)) (nothing carried, within ~30 s): the Muon comparison on the same shards and pick"
      echo "    STAGES=speed ROWS=\"muon_vs_airbench profile_eager fast_variants\" SEEDS=5 BUDGET_S=480 bash tools/gpu-host/device_check.sh $bundle_dir \"\$OUT\""
    else
      echo "    bash tools/gpu-host/data_assemble.sh stash $dir/call$call"
    fi
  done <<< "$calls"
}

main
