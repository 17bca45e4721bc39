#!/usr/bin/env bash
# Broken or unsuitable training data must stop every rank before the first epoch with a message naming the
# file (or key) and the problem: missing, truncated, corrupt or schema-violating shards, empty or tiny splits.
set -euo pipefail
# shellcheck source=tests/failure/lib.sh
source "$(dirname "$0")/lib.sh"
: "${FUSETRAIN_TOOLS:?}"
mutator=$FUSETRAIN_TOOLS/shard_mutator
prep_data "$WORK/clean"
shard=train-00001-of-00003.h5

# data_case NAME DATA_DIR REGEX [fusetrain args...]: one rank trains on DATA_DIR and must fail naming REGEX.
data_case() {
  local name=$1 dir=$2 expected=$3
  shift 3
  write_config "$WORK/$name.yaml" "$dir"
  run_case "$name" 60 "$FT" train --config "$WORK/$name.yaml" "$@"
  expect_failure
  expect_message "^fusetrain: (rank [0-9]+ \([^)]*\): )?error: .*$expected"
  expect_no_message "^epoch |^results: "
  expect_absent "$WORK/runs/case.h5"
  # Measured 0.8-2.4 s over the default, AVX2 and AVX512 ISAs and a busy core (tests/README.md, "Thresholds");
  # bound 30 s.
  expect_faster_than 30
  pass
}

# damaged NAME: a fresh copy of the clean shards in $WORK/NAME, printed for the caller to damage.
damaged() {
  rm -rf "${WORK:?}/$1" && cp -r "$WORK/clean" "$WORK/$1"
  echo "$WORK/$1"
}

dir=$(damaged missing_shard)
rm "$dir/$shard"
check data_case missing_shard "$dir" "data directory $dir is missing shard $shard"

dir=$(damaged test_split_missing)
rm "$dir"/test-*.h5
check data_case test_split_missing "$dir" "data directory $dir has no test-\*-of-\*\.h5 shards"

dir=$(damaged no_data_dir)
rm -rf "$dir"
check data_case no_data_dir "$dir" "data directory $dir does not exist"

# data.path naming a shard file rather than its folder: said so, with the folder it probably meant.
dir=$(damaged path_is_file)
check data_case path_is_file "$dir/$shard" "data directory $dir/$shard is a file, not a folder: point data\.path \(or --data\) at the folder that holds the shards \($dir\?\)"

dir=$(damaged truncated)
truncate -s 40000 "$dir/$shard"
check data_case truncated "$dir" "$dir/$shard.*(truncated|corrupt)"

dir=$(damaged corrupt_header)
printf 'this is not HDF5 at all' | dd of="$dir/$shard" bs=1 seek=0 conv=notrunc status=none
check data_case corrupt_header "$dir" "$dir/$shard.*(truncated|corrupt)"

# Overwrite the middle of the file (the compressed image chunks) with a fixed pattern.
dir=$(damaged corrupt_chunks)
size=$(stat -c %s "$dir/$shard")
head -c 30000 /dev/zero | tr '\0' 'Z' | dd of="$dir/$shard" bs=1 seek=$((size / 4)) conv=notrunc status=none
check data_case corrupt_chunks "$dir" "$dir/$shard.*(corrupt|can't read|cannot read)"

for mode in float-images rank3-images format-version no-labels bad-label other-dataset; do
  dir=$(damaged "schema_$mode")
  "$mutator" "$mode" "$dir/$shard"
  case $mode in
    float-images) expected="$dir/$shard: /images must be uint8" ;;
    rank3-images) expected="$dir/$shard: /images has rank 3, expected 4 \(N,H,W,C\)" ;;
    format-version) expected="$dir/$shard: format_version is 2 but this fusetrain reads version 1 \(re-run fusetrain-prep\)" ;;
    no-labels) expected="$dir/$shard: .*labels" ;;
    bad-label) expected="$dir/$shard.*label 10 .*outside 0\.\.9" ;;
    other-dataset) expected="$dir/$shard: data set, image shape or classes differ from $dir/train-00000-of-00003\.h5" ;;
  esac
  check data_case "schema_$mode" "$dir" "$expected"
done

dir=$(damaged empty_split)
for f in "$dir"/train-*.h5; do "$mutator" empty "$f"; done
check data_case empty_split "$dir" "the train split in $dir holds no images"

# mpirun_case NAME RANKS REGEX [fusetrain args...]: every rank of the job must stop with REGEX.
mpirun_case() {
  local name=$1 ranks=$2 expected=$3
  shift 3
  # shellcheck disable=SC2086
  run_case "$name" 60 $FUSETRAIN_MPIRUN -np "$ranks" "$FT" train --config "$WORK/tiny.yaml" "$@"
  expect_failure
  expect_message "error: $expected"
  expect_no_message "^epoch "
  # Measured 1.5-4.2 s (tests/README.md, "Thresholds"); bound 40 s.
  expect_faster_than 40
  pass
}

# Splits too small for the job: every rank stops, the key or the rank count is named.
write_config "$WORK/tiny.yaml" "$WORK/clean"
check mpirun_case batch_too_large 2 \
  "data\.batch_size 512 is larger than the smallest rank's slice of 300 training images" --set data.batch_size=512
check mpirun_case ranks_exceed_test 3 "3 ranks but the test split has only 2 images: use fewer ranks" \
  --set data.limit_test=2
check mpirun_case ranks_exceed_train 3 "(some rank holds no training images|rank).*use fewer ranks" \
  --set data.limit_train=2
finish "data errors"
