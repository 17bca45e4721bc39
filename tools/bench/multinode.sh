#!/usr/bin/env bash
# The inter-node benchmarks on network-namespace nodes (tests/multinode/netns_cluster.sh; root only): fused
# ResNet-18 all-reduce, flat against hierarchical at 2 and 4 nodes beside the link's bound, fixed against
# autotuned fusion buckets, and step scaling.
#
# Usage: tools/bench/multinode.sh OUT        (as root; writes OUT/*.log and prints the tables)
# Environment: FUSETRAIN_BIN_DIR (default build/bin), RATE (link bandwidth, default 10gbit), NODES (default
# "2 4"), RANKS_PER_NODE (default 2), REPEATS (alternating flat/hierarchical runs, default 3), ITERATIONS
# (timed all-reduces per run, default 10), STEPS (default 5), BATCH (default 32).
set -euo pipefail
[ $# -eq 1 ] || { sed -n '4,6p' "$0"; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export FUSETRAIN_BIN_DIR=${FUSETRAIN_BIN_DIR:-$root/build/bin}
export FUSETRAIN_TMP=$1
rate=${RATE:-10gbit} per_node=${RANKS_PER_NODE:-2}
gbit=$(numfmt --from=si "$(tr '[:lower:]' '[:upper:]' <<< "${rate%bit}")" | awk '{ print $1 / 1e9 }')
# shellcheck source-path=SCRIPTDIR source=../../tests/multinode/netns_cluster.sh
source "$root/tests/multinode/netns_cluster.sh"
# shellcheck source-path=SCRIPTDIR source=../../tests/multinode/lib.sh
source "$root/tests/multinode/lib.sh"
mkdir -p "$FUSETRAIN_TMP"
trap netns_down EXIT

# hosts N K: "node1:K,node2:K,...,nodeN:K"
hosts() { seq "$1" | sed "s/^/node/; s/\$/:$2/" | paste -sd,; }

# bench_allreduce LOG HOSTS RANKS ARGS...: one ResNet-18 bench allreduce on the CPU from node1, output in LOG.
bench_allreduce() {
  local log=$1 hosts=$2 ranks=$3
  shift 3
  mn_mpirun node1 "$hosts" "$ranks" "$FT" bench allreduce --model resnet18 --device cpu \
    --iterations "${ITERATIONS:-10}" "$@" > "$log" 2>&1 || { tail -n 20 "$log"; mn_fail "bench allreduce failed (see $log)"; }
}

# row LAYOUT ALGORITHM RUN LOG: the table row of one bench allreduce log (bound and ratio only with a bound).
row() {
  awk -v layout="$1" -v a="$2" -v run="$3" -F'|' '
    /^\| \(b\)/ { b = $3 } /^\| \(c\)/ { c = $3 } /^link bound/ { split($0, w, " "); bound = w[8] }
    END { printf "| %s | %s | %d | %.1f | %.1f | %s | %s |\n", layout, a, run, b, c,
          bound ? sprintf("%.1f", bound) : "-", bound ? sprintf("%.2f", b / bound) : "-" }' "$4"
}

# allreduce NODES: REPEATS runs of each algorithm in turn, K ranks on each of NODES nodes; a row per run
# with the fusion engine's time (b), one buffer's (c) and the link bound.
allreduce() {
  local nodes=$1 algorithm log run
  netns_up "$nodes" "$rate" > /dev/null
  for run in $(seq "${REPEATS:-3}"); do
    for algorithm in flat hierarchical; do
      log=$FUSETRAIN_TMP/allreduce-${nodes}x$per_node-$algorithm-$run.log
      bench_allreduce "$log" "$(hosts "$nodes" "$per_node")" $((nodes * per_node)) --allreduce "$algorithm" \
        --link-gbit "$gbit"
      row "$nodes x $per_node" "$algorithm" "$run" "$log"
    done
    # The same ranks on one node: no network, the machine's own speed for this many ranks.
    log=$FUSETRAIN_TMP/allreduce-1x$((nodes * per_node))-$run.log
    bench_allreduce "$log" "node1:$((nodes * per_node))" $((nodes * per_node)) --allreduce flat
    row "1 x $((nodes * per_node))" "flat, no network" "$run" "$log"
  done
  netns_down
}

# autotune: on 2 nodes, REPEATS runs of the flat all-reduce with the default buckets (25 MiB, first
# 1 MiB) and with the sizes bench allreduce --autotune picks, in turn.
autotune() {
  local run log tuned
  netns_up 2 "$rate" > /dev/null
  for run in $(seq "${REPEATS:-3}"); do
    for tuned in "" --autotune; do
      log=$FUSETRAIN_TMP/autotune-2x$per_node-${tuned:-default}-$run.log
      # shellcheck disable=SC2086  # $tuned is empty or one option
      bench_allreduce "$log" "$(hosts 2 "$per_node")" $((2 * per_node)) --allreduce flat --link-gbit "$gbit" $tuned
      row "2 x $per_node" "flat, $(sed -n 's/^all-reduce of .* buckets (\(.*\)), median.*/\1/p' "$log")${tuned:+ (autotuned)}" \
        "$run" "$log"
    done
  done
  netns_down
}

# step NAME NODES RANKS_PER_NODE: images/s of ResNet-18 training steps (one thread per rank).
step() {
  local log=$FUSETRAIN_TMP/step-$1.log
  mn_mpirun node1 "$(hosts "$2" "$3")" $(($2 * $3)) "$FT" bench step-worker --model resnet18 --device cpu \
    --threads 1 --batch "${BATCH:-32}" --steps "${STEPS:-5}" --warmup 2 > "$log" 2>&1 ||
    { tail -n 20 "$log"; mn_fail "bench step-worker failed (see $log)"; }
  sed -n 's/^images_per_s=\([0-9.]*\) .*/\1/p' "$log"
}

echo "--- ResNet-18 fused all-reduce (44.7 MB fp32), $rate links"
printf '| nodes x ranks | algorithm | run | b_ms | c_ms | bound_ms | b/bound |\n|---|---|---|---|---|---|---|\n'
for nodes in ${NODES:-2 4}; do allreduce "$nodes"; done

echo "--- the same, fusion buckets fixed against autotuned"
printf '| nodes x ranks | buckets | run | b_ms | c_ms | bound_ms | b/bound |\n|---|---|---|---|---|---|---|\n'
autotune

netns_up 2 "$rate" > /dev/null
one=$(step 1x1 1 1)
two_nodes=$(step 2x1 2 1)
one_node=$(step 1x2 1 2)
echo "--- ResNet-18 steps, batch ${BATCH:-32} per rank, 1 thread per rank, $rate links"
printf '| layout | images_per_s | scaling_efficiency |\n|---|---|---|\n'
for row in "1 node x 1 rank:$one:1" "2 nodes x 1 rank (TCP between nodes):$two_nodes:2" \
  "1 node x 2 ranks (shared memory):$one_node:2"; do
  IFS=: read -r name ips n <<< "$row"
  awk -v name="$name" -v ips="$ips" -v n="$n" -v base="$one" \
    'BEGIN { printf "| %s | %.1f | %.1f%% |\n", name, ips, 100 * ips / (n * base) }'
done
