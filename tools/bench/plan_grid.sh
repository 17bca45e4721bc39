#!/usr/bin/env bash
# The cost model of `fusetrain plan` against the namespace cluster (tests/multinode/netns_cluster.sh; root only):
# block by block (a link rate and an added latency), the link swept on 2 nodes, the compute profiled on 1 to N nodes
# without communication, the block's cells predicted and their predictions checksummed, and only then ResNet-18 and
# simple_cnn training steps measured on 2, 3 and 4 nodes; at the end the table of predicted against measured, with
# the bounds: step time within 10% of the measured median in the median over the grid and within 20% in every
# cell, and scaling efficiency within 5 points in the median.
#
# Usage: tools/bench/plan_grid.sh OUT     (as root; OUT/RATE-DELAY/ per block, OUT/predictions.tsv, OUT/grid.md)
# Environment: FUSETRAIN_BIN_DIR (default build/bin), RATES (default "100mbit 1gbit 10gbit"), DELAYS (one-way
# latency added on each node's egress by the namespace cluster's delay line, default "0ms 2ms"), NODES (default
# "2 3 4"), MODELS (default "simple_cnn resnet18"), BATCH_simple_cnn (default 64), BATCH_resnet18 (default 32),
# STEPS (timed steps per run, default 10), REPEATS (runs of every cell, each against its own 1-node run, default
# 3), SWEEP_ITERATIONS (default 8), PROFILE_STEPS (default 10), BACKEND (of the sweep and the measured steps,
# default gloo: its waits sleep, where MPI's poll and take the shared cores from the ranks computing), PREDICTIONS
# (measure against this predictions.tsv, made earlier, instead of sweeping, profiling and predicting afresh),
# PHASES (default "predict measure compare").
set -euo pipefail
[ $# -eq 1 ] || { sed -n '9,17p' "$0"; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export FUSETRAIN_BIN_DIR=${FUSETRAIN_BIN_DIR:-$root/build/bin}
export FUSETRAIN_TMP=$1
# shellcheck source-path=SCRIPTDIR source=../../tests/multinode/netns_cluster.sh
source "$root/tests/multinode/netns_cluster.sh"
# shellcheck source-path=SCRIPTDIR source=../../tests/multinode/lib.sh
source "$root/tests/multinode/lib.sh"
out=$FUSETRAIN_TMP
mkdir -p "$out/logs"
trap netns_down EXIT
rates=${RATES:-100mbit 1gbit 10gbit} delays=${DELAYS:-0ms 2ms} node_counts=${NODES:-2 3 4}
models=${MODELS:-simple_cnn resnet18} steps=${STEPS:-10} repeats=${REPEATS:-3} backend=${BACKEND:-gloo}
wants() { [[ " ${PHASES:-predict measure compare} " == *" $1 "* ]]; }
batch() { local var=BATCH_$1; case $1 in resnet18) echo "${!var:-32}" ;; *) echo "${!var:-64}" ;; esac; }
predictions_header=$'model\trate\tdelay\tnodes\tstep_s\tefficiency\texposed_s'
largest=$(tr ' ' '\n' <<< "$node_counts" | sort -n | tail -n 1)

# cluster N RATE DELAY: N nodes whose data links run at RATE, each node's outgoing traffic delayed by DELAY (the
# namespace cluster's delay line, as netem's delay); TCP keeps its window after idle (a step's forward leaves the
# link idle), as HPC hosts set it.
cluster() {
  local n=$1 rate=$2 delay=$3 i
  netns_up "$n" "$rate" "$delay" > /dev/null
  for i in $(seq "$n"); do
    ip netns exec "$(netns_name "node$i")" sysctl -qw net.ipv4.tcp_slow_start_after_idle=0
  done
}

hosts() { seq "$1" | sed 's/^/node/; s/$/:1/' | paste -sd,; }

# sweep_once LOG FIT [ARGS...]: a flat all-reduce sweep on the 2-node cluster that is up, fitted into FIT.
sweep_once() {
  local log=$1 fit=$2
  shift 2
  mn_mpirun node1 "$(hosts 2)" 2 "$FT" bench allreduce --sweep --level inter --fit "$fit" --backend "$backend" \
    --device cpu --iterations "${SWEEP_ITERATIONS:-8}" "$@" > "$log" 2>&1 ||
    { tail -n 20 "$log"; mn_fail "link sweep failed (see $log)"; }
}

# sweep DIR RATE DELAY: the link between nodes at RATE and DELAY, swept on 2 nodes x 1 rank and fitted, on idle
# cores and again beside a busy thread per rank (the measured steps compute with one thread per rank).
sweep() {
  local dir=$1 rate=$2 delay=$3 log=$out/logs/sweep-$2-$3
  cluster 2 "$rate" "$delay"
  sweep_once "$log.log" "$dir/link.json"
  sweep_once "$log-beside.log" "$dir/link-beside.json" --beside-compute 1
  netns_down
  echo "link $rate, $delay: $(grep '^fit:' "$log.log"); $(grep '^machine CPU:' "$log.log" | cut -d'(' -f1)"
  echo "  beside a busy thread per rank: $(grep '^fit:' "$log-beside.log")"
}

# profile DIR: the compute of each model with 1 and with N ranks at once, placed as the measured steps are (a rank
# on each of N namespace nodes: each remote node's processes start a session, and so a scheduler autogroup, of
# their own, which on a loaded machine gives N nodes N shares of the cores where N ranks of one node get one),
# computing without communication; one thread per rank.
profile() {
  local dir=$1 model p log
  for p in 1 $node_counts; do
    netns_up "$p" > /dev/null
    for model in $models; do
      log=$out/logs/profile-$(basename "$dir")-$model-$p.log
      mn_mpirun node1 "$(hosts "$p")" "$p" "$FT" plan profile --model "$model" --device cpu --batch "$(batch "$model")" \
        --steps "${PROFILE_STEPS:-10}" --warmup 2 --threads 1 --out "$dir/profile-$model-$p.json" > "$log" 2>&1 ||
        { tail -n 20 "$log"; mn_fail "profile failed (see $log)"; }
      grep '^profile of' "$log" | sed 's/^/  /'
    done
    netns_down
  done
}

# predict DIR RATE DELAY: the block's cells predicted into DIR/predictions.tsv, before any of them is measured.
predict() {
  local dir=$1 rate=$2 delay=$3 model topologies profiles p
  topologies=$(for n in $node_counts; do printf '%sx1,' "$n"; done)
  echo "$predictions_header" > "$dir/predictions.tsv.part"
  for model in $models; do
    profiles=()
    for p in 1 $node_counts; do profiles+=(--profile "$dir/profile-$model-$p.json"); done
    "$FT" plan "${profiles[@]}" --link "$dir/link.json" --topology "${topologies%,}" --allreduce flat --one-machine \
      --link-beside-compute "$dir/link-beside.json" --json "$dir/plan-$model.json" > "$out/logs/plan-$rate-$delay-$model.md"
    jq -r --arg m "$model" --arg r "$rate" --arg d "$delay" \
      '.rows[] | [$m, $r, $d, .nodes, .step_s, .efficiency, .exposed_s] | @tsv' \
      "$dir/plan-$model.json" >> "$dir/predictions.tsv.part"
  done
  mv "$dir/predictions.tsv.part" "$dir/predictions.tsv"
  tail -n +2 "$dir/predictions.tsv" >> "$out/predictions.tsv"
}

# step LOG NODES MODEL: one run of timed training steps on NODES nodes x 1 rank; prints "seconds images_per_s".
step() {
  local log=$1 n=$2 model=$3
  mn_mpirun node1 "$(hosts "$n")" "$n" "$FT" bench step-worker --model "$model" --device cpu --backend "$backend" --threads 1 \
    --batch "$(batch "$model")" --steps "$steps" --warmup 2 > "$log" 2>&1 ||
    { tail -n 20 "$log"; mn_fail "bench step-worker failed (see $log)"; }
  sed -n 's/^images_per_s=\([0-9.]*\) .*seconds=\([0-9.]*\) .*/\2 \1/p' "$log"
}

# started FILE: the line, written before a measurement's first step, naming the predictions it is measured against.
started() {
  printf '# measured against %s sha256 %s, from %s\n' "${1#"$out"/}" "$(sha256sum < "$1" | cut -c1-64)" \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" | tee -a "$out/measured.started"
}

# measure RATE DELAY: every cell of the block REPEATS times, each repeat on a cluster of its own (instances of one
# cell differ by more than runs on one) with its own 1-node run of each model first.
measure() {
  local rate=$1 delay=$2 run model n result seconds ips
  for run in $(seq "$repeats"); do
    cluster "$largest" "$rate" "$delay"
    for model in $models; do
      for n in 1 $node_counts; do
        result=$(step "$out/logs/step-$model-$rate-$delay-${n}x1-$run.log" "$n" "$model")
        read -r seconds ips <<< "$result"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$model" "$rate" "$delay" "$n" "$run" \
          "$(awk -v s="$seconds" -v k="$steps" 'BEGIN { print s / k }')" "$ips" >> "$out/measured.tsv"
      done
    done
    netns_down
  done
  echo "measured $rate, $delay"
}

# Each block of cells (a rate and a latency) is swept, profiled and predicted just before it is measured, so that
# the compute a prediction uses and the steps it predicts run minutes apart, not an hour: the shared VM's speed
# drifts by 20-30% over an hour. Each block's predictions are checksummed into measured.started before its first
# step; PREDICTIONS (made earlier) replaces all of that.
block() {
  local rate=$1 delay=$2 dir=$out/$1-$2
  if [ -z "${PREDICTIONS:-}" ] && wants predict; then
    mkdir -p "$dir"
    echo "--- $rate, $delay: the link between 2 nodes, the compute on 1 to $largest nodes, the predictions"
    sweep "$dir" "$rate" "$delay"
    profile "$dir"
    predict "$dir" "$rate" "$delay"
    wants measure && started "$dir/predictions.tsv"
  fi
  if wants measure; then measure "$rate" "$delay"; fi
}

if wants measure; then
  printf 'model\trate\tdelay\tnodes\trun\tstep_s\timages_per_s\n' > "$out/measured.tsv"
  : > "$out/measured.started"
fi
if [ -n "${PREDICTIONS:-}" ]; then
  cp "$PREDICTIONS" "$out/predictions.tsv"
  echo "--- predictions: $PREDICTIONS, made earlier"
  wants measure && started "$out/predictions.tsv"
elif wants predict; then
  command -v jq > /dev/null || mn_fail "jq not found"
  echo "$predictions_header" > "$out/predictions.tsv"
fi
[ -s "$out/predictions.tsv" ] || mn_fail "no $out/predictions.tsv: predict (PHASES=predict) or give PREDICTIONS"
for rate in $rates; do
  for delay in $delays; do block "$rate" "$delay"; done
done
if wants compare; then
  python3 "$root/tools/bench/plan_grid.py" "$out/predictions.tsv" "$out/measured.tsv" --started "$out/measured.started" |
    tee "$out/grid.md"
fi
