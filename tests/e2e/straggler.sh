#!/usr/bin/env bash
# A rank slowed on purpose is named, and no rank without the slowdown: 2 and 4 ranks on real Fashion-MNIST, the
# slowed rank's forward taking 4 times its own time (FUSETRAIN_TEST_SLOW_RANK=R:x4, so the slowdown stays
# large against whatever else runs on the machine; once rank 0 by a fixed 60 ms a forward, R:60, several times its
# forward's own time) against a threshold of 50% above the others' median. The terminal line and the results
# file's /summary name it, with a share of the others' step spent waiting; a malformed value of the aid is refused
# by name.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
FT=$FUSETRAIN_BIN/fusetrain
work=$FUSETRAIN_TMP/straggler
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 2000 train images at batch 32: 31 steps on 2 ranks, 15 on 4.
"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 4 --limit 2000 > /dev/null
cat > "$work/run.yaml" <<YAML
model: {name: simple_cnn}
data: {path: $work/data, batch_size: 32, limit_test: 128}
train: {epochs: 1, threads: 1, device: cpu}
distributed: {backend: gloo, stall_timeout_s: 60, straggler_share: 0.5}
output: {dir: $work/runs, progress_every_s: 0, tensorboard: false, save_model: false}
YAML
# shellcheck disable=SC2206
mpirun=($FUSETRAIN_MPIRUN)

# run NAME RANKS [SLOW [BY]]: trains, the rank SLOW (if given) slowed BY (the aid's amount: xF or milliseconds;
# x4 if not given); checks the line and /summary/straggler_rank.
run() {
  local name=$1 ranks=$2 slow=${3:-} by=${4:-x4} expected=-1 log=$work/$1.log
  if [ -n "$slow" ]; then
    expected=$slow
    FUSETRAIN_TEST_SLOW_RANK=$slow:$by "${mpirun[@]}" -x FUSETRAIN_TEST_SLOW_RANK -np "$ranks" "$FT" train \
      --config "$work/run.yaml" --set "output.name=$name" > "$log" 2>&1 || { cat "$log"; fail "$name did not train"; }
    grep -q "^straggler: rank $slow ([^)]*) computed [0-9]*% above the others' median in [0-9]*% of steps; the other ranks spent [1-9][0-9]*% of their step waiting for it$" "$log" ||
      { cat "$log"; fail "$name: rank $slow was slowed and not named"; }
  else
    "${mpirun[@]}" -np "$ranks" "$FT" train --config "$work/run.yaml" --set "output.name=$name" > "$log" 2>&1 ||
      { cat "$log"; fail "$name did not train"; }
    grep -q "^straggler: none (no rank's compute was more than 50% above the others' median in most steps)$" "$log" ||
      { cat "$log"; fail "$name: a rank was named with no rank slowed"; }
  fi
  local named
  named=$("$FT" inspect "$work/runs/$name.h5" /summary/straggler_rank)
  [ "$named" = "$expected" ] || fail "$name: /summary/straggler_rank is $named, not $expected"
  echo "ok: $name: $(grep '^straggler:' "$log")"
}

run plain2 2
run slow2 2 1
run slow2ms 2 0 60
run plain4 4
run slow4 4 2

if FUSETRAIN_TEST_SLOW_RANK=1:fast "$FT" train --config "$work/run.yaml" --set output.name=bad > "$work/bad.log" 2>&1; then
  fail "FUSETRAIN_TEST_SLOW_RANK=1:fast was accepted"
fi
grep -q "FUSETRAIN_TEST_SLOW_RANK must be R:MS (milliseconds above 0) or R:xF (a factor above 1) with R a rank, got '1:fast'" \
  "$work/bad.log" || { cat "$work/bad.log"; fail "unclear error for a malformed FUSETRAIN_TEST_SLOW_RANK"; }
echo PASS
