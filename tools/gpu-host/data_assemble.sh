#!/usr/bin/env bash
# The host's side of tools/gpu-host/data_split.sh: each call stashes the parts it carried outside the checkout
# (checked against the manifest as they arrive), and once all are there the archive is put together in order,
# checked whole against its SHA-256, unpacked and made into CIFAR-10 shards by the carried fusetrain-prep.
# Every refusal names the part (its number and the call that carries it) that is missing or damaged.
#
# usage: tools/gpu-host/data_assemble.sh stash CALL_DIR [STORE]
#        tools/gpu-host/data_assemble.sh assemble STORE ARCHIVE [SHARDS_DIR]
#   stash     copies CALL_DIR's parts (a folder data_split.sh made, carried by this call) into STORE
#             [$DATA_STORE or /tmp/fusetrain-data], each checked against CALL_DIR/manifest.txt; a STORE holding
#             another archive's parts is emptied first. Prints the parts still missing.
#   assemble  appends STORE's parts in order into ARCHIVE (written whole or not at all) and checks its size and
#             SHA-256; with SHARDS_DIR, unpacks it and runs fusetrain-prep --format cifar10 into SHARDS_DIR
#             (FUSETRAIN_PREP [fusetrain-prep on PATH]; PREP_ARGS, extra arguments).
# Exit status: 0 done, 1 a part missing or damaged, a wrong whole or a failed conversion, 2 bad usage.
set -euo pipefail
die() { echo "data_assemble.sh: $*" >&2; exit "${2:-1}"; }

# field MANIFEST KEY: a key=value line's value.
field() { sed -n "s/^$2=//p" "$1" | head -n 1; }
# The manifest's part lines: "NN BYTES SHA256 callK".
part_lines() { sed -n 's/^part //p' "$1"; }
sha256_of() { sha256sum < "$1" | cut -d' ' -f1; }

# check_part FILE NN BYTES SHA CALL WHERE: refuses, naming the part and its call, unless FILE is that part.
check_part() {
  local file=$1 number=$2 bytes=$3 sha=$4 call=$5 where=$6 got
  [ -f "$file" ] || die "part $number (carried by $call) is missing from $where"
  got=$(stat -c %s "$file")
  [ "$got" = "$bytes" ] || die "part $number (carried by $call) is damaged: $got bytes in $where, the manifest says $bytes; send $call again"
  got=$(sha256_of "$file")
  [ "$got" = "$sha" ] || die "part $number (carried by $call) is damaged: sha256 $got in $where, the manifest says $sha; send $call again"
}

# What STORE has and lacks, as one line.
report() {
  local store=$1 number bytes sha call have="" missing=""
  while read -r number bytes sha call; do
    if [ -f "$store/part$number" ]; then have="$have $number"; else missing="$missing $number ($call)"; fi
  done < <(part_lines "$store/manifest.txt")
  echo "data_assemble.sh: $(field "$store/manifest.txt" name): $store has part(s)${have:- none} of $(field "$store/manifest.txt" parts)${missing:+; missing:$missing}"
}

stash() {
  local dir=${1:?usage: data_assemble.sh stash CALL_DIR [STORE]} store=${2:-${DATA_STORE:-/tmp/fusetrain-data}}
  local manifest=$dir/manifest.txt number bytes sha call
  [ -f "$manifest" ] || die "$manifest: no manifest (carry a folder data_split.sh made)" 2
  mkdir -p "$store"
  if [ -f "$store/manifest.txt" ] && ! cmp -s "$manifest" "$store/manifest.txt"; then
    echo "data_assemble.sh: $store held the parts of another split ($(field "$store/manifest.txt" sha256)): emptied"
    rm -f "$store"/part[0-9]* "$store/manifest.txt"
  fi
  cp "$manifest" "$store/manifest.txt.partial" && mv "$store/manifest.txt.partial" "$store/manifest.txt"
  while read -r number bytes sha call; do
    [ -f "$dir/part$number" ] || continue
    check_part "$dir/part$number" "$number" "$bytes" "$sha" "$call" "$dir"
    cp "$dir/part$number" "$store/part$number.partial" && mv "$store/part$number.partial" "$store/part$number"
  done < <(part_lines "$manifest")
  report "$store"
}

assemble() {
  local store=${1:?usage: data_assemble.sh assemble STORE ARCHIVE [SHARDS_DIR]} archive=${2:?usage: data_assemble.sh assemble STORE ARCHIVE [SHARDS_DIR]}
  local shards=${3:-} manifest=$1/manifest.txt number bytes sha call got
  [ -f "$manifest" ] || die "$store: no manifest: no call stashed its parts here (data_assemble.sh stash)"
  while read -r number bytes sha call; do
    check_part "$store/part$number" "$number" "$bytes" "$sha" "$call" "$store"
  done < <(part_lines "$manifest")
  mkdir -p "$(dirname "$archive")"
  while read -r number bytes sha call; do cat "$store/part$number"; done < <(part_lines "$manifest") > "$archive.partial"
  got=$(stat -c %s "$archive.partial")
  [ "$got" = "$(field "$manifest" bytes)" ] || { rm -f "$archive.partial"; die "the parts make $got bytes, not $(field "$manifest" bytes)"; }
  got=$(sha256_of "$archive.partial")
  [ "$got" = "$(field "$manifest" sha256)" ] ||
    { rm -f "$archive.partial"; die "the parts put together have sha256 $got, not $(field "$manifest" sha256)"; }
  mv "$archive.partial" "$archive"
  echo "data_assemble.sh: $archive: $(field "$manifest" parts) parts, $(field "$manifest" bytes) bytes, sha256 $got verified"
  [ -z "$shards" ] || make_shards "$archive" "$shards"
}

# CIFAR-10 shards from the verified archive, made in a fresh folder and moved into place whole.
make_shards() {
  local archive=$1 shards=$2 unpacked=$2.unpacked prep=${FUSETRAIN_PREP:-fusetrain-prep}
  rm -rf "$unpacked" "$shards.partial" && mkdir -p "$unpacked"
  tar -xJf "$archive" -C "$unpacked" || die "$archive: cannot unpack"
  # shellcheck disable=SC2086  # PREP_ARGS is an argument list
  "$prep" --format cifar10 --name cifar10 --input "$unpacked" --output "$shards.partial" ${PREP_ARGS:-} ||
    die "fusetrain-prep ($prep) failed on $archive"
  rm -rf "$shards" "$unpacked" && mv "$shards.partial" "$shards"
  echo "data_assemble.sh: shards of $(basename "$archive") in $shards"
}

case ${1:-} in
  stash) shift; stash "$@" ;;
  assemble) shift; assemble "$@" ;;
  *) die "usage: data_assemble.sh stash CALL_DIR [STORE] | assemble STORE ARCHIVE [SHARDS_DIR]" 2 ;;
esac
