#!/usr/bin/env bash
# A run's clocks in its results file, from a fresh process timed from outside: one positive epoch_time_s per
# epoch, their sum as /summary/train_steps_s and as report's train_s, the warm-up's steps and seconds outside
# them, and the cold clock (the process's start to the last epoch's end) past the warm-up and the training
# together, yet within the process's whole life as measured around it.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
work=$FUSETRAIN_TMP/clocks
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --limit 640 > "$work/prep.log"
cat > "$work/run.yaml" <<YAML
model: {name: simple_cnn}
data: {path: $work/data, batch_size: 64, limit_test: 128}
optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
train: {epochs: 2, seed: 1, device: cpu, threads: 1, warmup_steps: 3, max_steps: 15}
output: {dir: $work/runs, name: clocks}
YAML
before=$(date +%s.%N)
"$FUSETRAIN_BIN/fusetrain" train --config "$work/run.yaml" > "$work/train.log" 2>&1 || fail "training failed: $(tail -n 5 "$work/train.log")"
after=$(date +%s.%N)
h5=$work/runs/clocks.h5
get() { "$FUSETRAIN_BIN/fusetrain" inspect "$h5" "$@"; }

mapfile -t epochs < <(get /epochs/epoch_time_s)
[ "${#epochs[@]}" -eq 2 ] || fail "${#epochs[@]} epoch times, expected 2 (10 steps, then 5)"
[ "$(get /summary/optimizer_steps)" = 15 ] || fail "$(get /summary/optimizer_steps) steps, expected train.max_steps 15"
[ "$(get /summary/warmup_steps)" = 3 ] || fail "warmup_steps $(get /summary/warmup_steps), expected 3"
awk -v a="${epochs[0]}" -v b="${epochs[1]}" -v sum="$(get /summary/train_steps_s)" -v warm="$(get /summary/warmup_s)" \
    -v cold="$(get /summary/cold_s)" -v loop="$(get /summary/train_time_s)" -v life="$(awk -v x="$before" -v y="$after" 'BEGIN { print y - x }')" '
  function check(ok, what) { if (!ok) { print "FAIL: " what; bad = 1 } }
  BEGIN {
    check(a > 0 && b > 0, "an epoch time is not positive: " a ", " b)
    check(sum - (a + b) < 1e-9 && (a + b) - sum < 1e-9, "train_steps_s " sum " is not the epochs sum " a + b)
    check(sum <= loop, "train_steps_s " sum " exceeds the epoch loop clock " loop)
    check(warm > 0, "warmup_s " warm " for 3 warm-up steps")
    check(cold >= warm + sum, "cold_s " cold " is less than warm-up and training, " warm + sum)
    # the kernel counts the start in 10 ms ticks, rounded down: the cold clock may read up to one tick long
    check(cold <= life + 0.011, "cold_s " cold " exceeds the process life measured around it, " life)
    printf "epochs %.3f + %.3f = %.3f s, warm-up %.3f s, cold %.3f s, process life %.3f s\n", a, b, sum, warm, cold, life
    exit bad
  }' || fail "the clocks do not add up"
train_s=$("$FUSETRAIN_BIN/fusetrain" report --csv "$h5" | awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next } { print $c["train_s"] }')
[ "$train_s" = "$(printf '%.2f' "$(get /summary/train_steps_s)")" ] || fail "report's train_s $train_s is not train_steps_s"
echo "PASS: the clocks add up"
