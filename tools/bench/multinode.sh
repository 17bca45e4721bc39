#!/usr/bin/env bash
# The inter-node benchmarks on network-namespace nodes (tests/multinode/netns_cluster.sh; root only): the
# links' real capacity (iperf3), fused ResNet-18 all-reduce at 2 and 4 nodes - MPI's own MPI_Iallreduce
# against the ring, hierarchical, Gloo - beside the bound at the nominal and the measured rate, fixed
# against autotuned fusion buckets, and step scaling with the all-reduce time hidden behind backward
# (REPEATS runs of every layout in turn, each against its own run's 1-node figure, and their median).
#
# Usage: tools/bench/multinode.sh OUT        (as root; writes OUT/*.log and prints the tables)
# Environment: FUSETRAIN_BIN_DIR (default build/bin), RATE (link bandwidth, default 10gbit), NODES (default
# "2 4"), RANKS_PER_NODE (default 2), REPEATS (runs of every variant in turn, default 3), ITERATIONS
# (timed all-reduces per run, default 10), STEPS (timed training steps per run, default 10: with 5 one
# disturbed step moved a run's scaling by 2-3%), BATCH (default 32), IPERF_SECONDS (default 3), SECTIONS (which
# parts run, default "link allreduce autotune steps"), POWERSGD_RANK (with it, the steps also run 2 nodes with
# PowerSGD at that rank from the first step, distributed.compression powersgd, and report their scaling),
# STEP_BACKEND (the steps' gradient backend, mpi or gloo, default mpi; with gloo the MPI_Iallreduce row is left out).
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
wants() { [[ " ${SECTIONS:-link allreduce autotune steps} " == *" $1 "* ]]; }

# hosts N K: "node1:K,node2:K,...,nodeN:K"
hosts() { seq "$1" | sed "s/^/node/; s/\$/:$2/" | paste -sd,; }

# bench_allreduce LOG HOSTS RANKS ARGS...: one ResNet-18 bench allreduce on the CPU from node1, output in LOG.
bench_allreduce() {
  local log=$1 hosts=$2 ranks=$3
  shift 3
  mn_mpirun node1 "$hosts" "$ranks" "$FT" bench allreduce --model resnet18 --device cpu \
    --iterations "${ITERATIONS:-10}" "$@" > "$log" 2>&1 || { tail -n 20 "$log"; mn_fail "bench allreduce failed (see $log)"; }
}

# link: on 2 fresh nodes, iperf3 from node1 to node2 (IPERF_SECONDS each), both directions at once and
# then one way; sets measured (Gbit/s, the slower direction of the two at once: what a full-duplex
# all-reduce gets) and prints a line with both.
link() {
  local server json one_way
  netns_up 2 "$rate" > /dev/null
  netns_exec node2 iperf3 --server --bind 10.77.0.2 > "$FUSETRAIN_TMP/iperf3-server.log" 2>&1 &
  server=$!
  for _ in $(seq 50); do netns_exec node1 bash -c 'exec 3<>/dev/tcp/10.77.0.2/5201' 2>/dev/null && break; sleep 0.1; done
  json=$FUSETRAIN_TMP/iperf3
  netns_exec node1 iperf3 --client 10.77.0.2 --time "${IPERF_SECONDS:-3}" --bidir --json > "$json-bidir.json"
  netns_exec node1 iperf3 --client 10.77.0.2 --time "${IPERF_SECONDS:-3}" --json > "$json-oneway.json"
  kill "$server" 2>/dev/null || true
  netns_down
  measured=$(jq '[.end.sum_received.bits_per_second, .end.sum_received_bidir_reverse.bits_per_second] | min / 1e9' \
    "$json-bidir.json")
  one_way=$(jq '.end.sum_received.bits_per_second / 1e9' "$json-oneway.json")
  awk -v m="$measured" -v o="$one_way" -v r="$rate" 'BEGIN {
    printf "--- link node1-node2, shaped to %s, iperf3: %.3f Gbit/s each way with both directions busy, %.3f Gbit/s one way\n",
           r, m, o }'
}

# row LAYOUT ALGORITHM RUN LOG: the table row of one bench allreduce log: the bound and b/bound at the
# nominal rate (from the log) and at the measured one (only where the log has a bound).
row() {
  awk -v layout="$1" -v a="$2" -v run="$3" -v scale="$(awk -v g="$gbit" -v m="$measured" 'BEGIN { print g / m }')" -F'|' '
    /^\| \(b\)/ { b = $3 } /^\| \(c\)/ { c = $3 } /^link bound/ { split($0, w, " "); bound = w[8] }
    END { printf "| %s | %s | %d | %.1f | %.1f | %s | %s | %s | %s |\n", layout, a, run, b, c,
          bound ? sprintf("%.1f", bound) : "-", bound ? sprintf("%.2f", b / bound) : "-",
          bound ? sprintf("%.1f", bound * scale) : "-", bound ? sprintf("%.2f", b / (bound * scale)) : "-" }' "$4"
}

# The all-reduce variants: name and bench allreduce options. Hierarchical only where a node runs several
# ranks (with one, it is the flat ring among the same ranks).
variants() {
  echo "mpi native|--allreduce flat --mpi-algorithm native"
  echo "mpi ring|--allreduce flat --mpi-algorithm ring"
  [ "$per_node" -eq 1 ] || echo "mpi hierarchical|--allreduce hierarchical"
  echo "gloo|--backend gloo --allreduce flat"
}

# allreduce NODES: REPEATS runs of each variant in turn, K ranks on each of NODES nodes; a row per run
# with the fusion engine's time (b), one buffer's (c) and the link bounds.
allreduce() {
  local nodes=$1 name args log run
  netns_up "$nodes" "$rate" > /dev/null
  for run in $(seq "${REPEATS:-3}"); do
    while IFS='|' read -r name args; do
      log=$FUSETRAIN_TMP/allreduce-${nodes}x$per_node-${name// /-}-$run.log
      # shellcheck disable=SC2086  # $args is a list of options
      bench_allreduce "$log" "$(hosts "$nodes" "$per_node")" $((nodes * per_node)) $args --link-gbit "$gbit" < /dev/null
      row "$nodes x $per_node" "$name" "$run" "$log"
    done < <(variants)
    # The same ranks on one node: no network, the machine's own speed for this many ranks.
    log=$FUSETRAIN_TMP/allreduce-1x$((nodes * per_node))-$run.log
    bench_allreduce "$log" "node1:$((nodes * per_node))" $((nodes * per_node)) --allreduce flat
    row "1 x $((nodes * per_node))" "flat, no network" "$run" "$log"
  done
  netns_down
}

# autotune: on 2 nodes, REPEATS runs of the flat all-reduce with the default buckets (4 MiB, first
# 1 MiB, last at most 0.25 MiB) and with the sizes bench allreduce --autotune picks, in turn.
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

# step NAME NODES RANKS_PER_NODE [ARGS...]: "images/s|all-reduce ms|exposed ms|hidden" of ResNet-18 training
# steps (one thread per rank; the last three per step, averaged over ranks).
step() {
  local log=$FUSETRAIN_TMP/step-$1.log nodes=$2 per=$3
  shift 3
  mn_mpirun node1 "$(hosts "$nodes" "$per")" $((nodes * per)) "$FT" bench step-worker --model resnet18 --device cpu \
    --backend "$step_backend" --threads 1 --batch "${BATCH:-32}" --steps "${STEPS:-10}" --warmup 2 "$@" > "$log" 2>&1 ||
    { tail -n 20 "$log"; mn_fail "bench step-worker failed (see $log)"; }
  awk '/^images_per_s=/ { for (i = 1; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
       printf "%s|%s|%s|%s\n", v["images_per_s"], v["allreduce_ms"], v["exposed_ms"], v["hidden"] }' "$log"
}

measured=$gbit
if wants link; then link; fi
header='| nodes x ranks | %s | run | b_ms | c_ms | bound_ms | b/bound | measured_bound_ms | b/measured_bound |'
rule='|---|---|---|---|---|---|---|---|---|'
if wants allreduce; then
  echo "--- ResNet-18 fused all-reduce (44.7 MB fp32), $rate links (bound at the nominal rate, and at the measured one)"
  printf "$header\n%s\n" algorithm "$rule"
  for nodes in ${NODES:-2 4}; do allreduce "$nodes"; done
fi
if wants autotune; then
  echo "--- the same, fusion buckets fixed against autotuned"
  printf "$header\n%s\n" buckets "$rule"
  autotune
fi
wants steps || exit 0

# step_rows RUN: one run of the four layouts in turn (five with POWERSGD_RANK), a row each; scaling is against
# this run's 1 x 1 figure, so a drift of the machine's speed between runs does not enter it. Appends the 2-node
# scaling to the file $scaling (and with PowerSGD to $scaling.powersgd).
step_rows() {
  local one two_nodes two_native one_node two_powersgd="" row name result n ips allreduce exposed hidden
  one=$(step "1x1-$1" 1 1)
  two_nodes=$(step "2x1-$1" 2 1)
  local rows=("1 node x 1 rank:$one:1" "2 nodes x 1 rank (TCP between nodes):$two_nodes:2")
  if [ "$step_backend" = mpi ]; then
    two_native=$(step "2x1-native-$1" 2 1 --mpi-algorithm native)
    rows+=("2 nodes x 1 rank, MPI_Iallreduce (native):$two_native:2")
  fi
  one_node=$(step "1x2-$1" 1 2)
  rows+=("1 node x 2 ranks (shared memory):$one_node:2")
  if [ -n "${POWERSGD_RANK:-}" ]; then
    two_powersgd=$(step "2x1-powersgd-$1" 2 1 --powersgd-rank "$POWERSGD_RANK")
    rows+=("2 nodes x 1 rank, PowerSGD rank $POWERSGD_RANK:$two_powersgd:2")
  fi
  for row in "${rows[@]}"; do
    IFS=: read -r name result n <<< "$row"
    IFS='|' read -r ips allreduce exposed hidden <<< "$result"
    awk -v name="$name" -v run="$1" -v ips="$ips" -v n="$n" -v base="${one%%|*}" -v a="$allreduce" -v e="$exposed" \
      -v h="$hidden" 'BEGIN { printf "| %s | %s | %.1f | %.1f%% | %s | %s | %s |\n", name, run, ips, 100 * ips / (n * base),
                              a == "" ? "-" : a, e == "" ? "-" : e, h == "" ? "-" : sprintf("%.0f%%", 100 * h) }'
  done
  awk -v ips="${two_nodes%%|*}" -v base="${one%%|*}" 'BEGIN { printf "%.1f\n", 100 * ips / (2 * base) }' >> "$scaling"
  [ -z "$two_powersgd" ] ||
    awk -v ips="${two_powersgd%%|*}" -v base="${one%%|*}" 'BEGIN { printf "%.1f\n", 100 * ips / (2 * base) }' \
      >> "$scaling.powersgd"
}

# median_scaling FILE WHAT: the median, lowest and highest of the runs' scaling figures in FILE.
median_scaling() {
  sort -n "$1" | awk -v what="$2" '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "--- step scaling from 1 to 2 nodes%s: median %.1f%% of %d runs (lowest %.1f%%, highest %.1f%%)\n", what, m, NR,
           v[1], v[NR] }'
}

step_backend=${STEP_BACKEND:-mpi}
case $step_backend in mpi | gloo) ;; *) mn_fail "STEP_BACKEND=$step_backend: mpi or gloo" ;; esac
netns_up 2 "$rate" > /dev/null
echo "--- ResNet-18 steps over $step_backend, batch ${BATCH:-32} per rank, 1 thread per rank, $rate links; per step: all-reduce time" \
  "on the communication thread, the part the training thread waited for (exposed) and the share hidden"
printf '| layout | run | images_per_s | scaling_efficiency | allreduce_ms | exposed_ms | hidden |\n'
printf '|---|---|---|---|---|---|---|\n'
scaling=$FUSETRAIN_TMP/step-scaling.txt
: > "$scaling"
: > "$scaling.powersgd"
for run in $(seq "${REPEATS:-3}"); do step_rows "$run"; done
median_scaling "$scaling" ""
[ ! -s "$scaling.powersgd" ] || median_scaling "$scaling.powersgd" " with PowerSGD rank $POWERSGD_RANK"
