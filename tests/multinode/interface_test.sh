#!/usr/bin/env bash
# distributed.interface pins every transport to one network: with 2 nodes x 2 ranks and the interface set,
# all traffic between the nodes crosses that link (byte counters of both), ranks listen only where they must
# (ss), a run on one node listens on loopback only, and a name a node lacks stops the run at once, naming
# the node and the interfaces it has.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=netns_cluster.sh
source "$here/netns_cluster.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh"
command -v ss > /dev/null || { echo "SKIP: ss (iproute2) not found"; exit 77; }
command -v jq > /dev/null || { echo "SKIP: jq not found"; exit 77; }
mn_start interface 2
mn_prep 4 2000
cat > "$WORK/run.yaml" <<YAML
model: {name: simple_cnn}
data: {path: $WORK/data, batch_size: 32, limit_train: 1600, limit_test: 400}
optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
train: {epochs: 1, seed: 3, device: cpu, threads: 1}
distributed: {stall_timeout_s: 60}
output: {dir: $WORK/runs, tensorboard: false, progress_every_s: 0}
YAML

# Open MPI launched as a job script would: the agent instead of ssh, and its own channel on the chosen
# network; which network the ranks use is the config's alone (no btl_tcp_if_include, no FUSETRAIN_GLOO_IFACE).
launch() {  # node hosts np oob-interface args...
  local node=$1 hosts=$2 np=$3 oob=$4
  shift 4
  netns_exec "$node" timeout --kill-after=10 "${MN_TIMEOUT:-300}" mpirun --allow-run-as-root --oversubscribe \
    --bind-to none --mca plm_rsh_agent "$here/netns_agent.sh" --mca plm_rsh_no_tree_spawn 1 \
    --mca btl_vader_single_copy_mechanism none --mca oob_tcp_if_include "$oob" --host "$hosts" -np "$np" "$@"
}

# Bytes sent by both nodes on DEVICE.
sent() {
  local total=0 node
  for node in node1 node2; do
    total=$((total + $(ip -n "$(netns_name "$node")" -j -s link show "$1" | jq '.[0].stats64.tx.bytes')))
  done
  echo "$total"
}

# Every TCP socket of a fusetrain rank inside NODE (listening or connected) while a run lasts, as "STATE
# local-address:port" lines; sampled every 0.1 s, since Gloo listens only while its ranks connect.
watch_sockets() {  # node out-file
  local ns
  ns=$(netns_name "$1")
  : > "$2"
  while :; do
    nsenter --net="/run/netns/$ns" ss -tanpH 2>/dev/null | awk '/"fusetrain"/ {print $1, $4}' >> "$2" || true
    sleep 0.1
  done
}

# Sockets of FILES whose local address is not one of the extended regexes that follow.
sockets_outside() {  # allowed-regex files...
  local allowed=$1
  shift
  cat "$@" | awk '{print $2}' | grep -Ev "^($allowed):[0-9]+$" || true
}

# train NAME BACKEND INTERFACE HOSTS NP: a run, its log and the listeners seen on node1 and node2.
train() {
  local name=$1 backend=$2 interface=$3 hosts=$4 np=$5 oob=$3 w1 w2 status=0
  [ "$interface" != auto ] || oob=lo
  watch_sockets node1 "$WORK/$name.sockets1" & w1=$!
  watch_sockets node2 "$WORK/$name.sockets2" & w2=$!
  launch node1 "$hosts" "$np" "$oob" "$FT" train --config "$WORK/run.yaml" --set "distributed.backend=$backend" \
    --set "distributed.interface=$interface" --set "output.name=$name" > "$WORK/$name.log" 2>&1 || status=$?
  kill "$w1" "$w2" 2>/dev/null || true
  wait "$w1" "$w2" 2>/dev/null || true
  sort -u -o "$WORK/$name.sockets1" "$WORK/$name.sockets1"
  sort -u -o "$WORK/$name.sockets2" "$WORK/$name.sockets2"
  return "$status"
}

# Two nodes, the interface set to one of the two links: the other carries (almost) nothing.
for case in mpi:eth1 gloo:eth1 mpi:eth0; do
  backend=${case%%:*} chosen=${case#*:}
  other=eth0
  [ "$chosen" = eth1 ] || other=eth1
  before_chosen=$(sent "$chosen") before_other=$(sent "$other")
  train "$backend-$chosen" "$backend" "$chosen" node1:2,node2:2 4 ||
    { tail -n 30 "$WORK/$backend-$chosen.log"; mn_fail "$backend-$chosen: training failed"; }
  on_chosen=$(($(sent "$chosen") - before_chosen)) on_other=$(($(sent "$other") - before_other))
  echo "$backend, distributed.interface=$chosen: $on_chosen bytes sent on $chosen, $on_other on $other;" \
    "node1's ranks listened on: $(awk '$1 == "LISTEN" {print $2}' "$WORK/$backend-$chosen.sockets1" | tr '\n' ' ')"
  [ "$on_chosen" -gt $((4 * 1024 * 1024)) ] || mn_fail "$backend-$chosen: only $on_chosen bytes crossed $chosen"
  [ "$on_other" -lt $((64 * 1024)) ] || mn_fail "$backend-$chosen: $on_other bytes crossed $other, not the chosen link"
  subnet='10\.77\.0\.[0-9]+'
  [ "$chosen" = eth0 ] || subnet='10\.78\.0\.[0-9]+'
  # Open MPI's TCP transport listens on the wildcard address whatever it is told (docs/multinode.md,
  # "Choosing the network"); loopback is the rank's line to its node's Open MPI daemon.
  outside=$(sockets_outside "$subnet|127\.0\.0\.1|0\.0\.0\.0|\*|\[::\]" "$WORK/$backend-$chosen".sockets*)
  [ -z "$outside" ] || mn_fail "$backend-$chosen: ranks used addresses outside $chosen: $outside"
done

# One node: shared memory between the ranks, sockets on loopback only.
for backend in mpi gloo; do
  train "one-node-$backend" "$backend" auto node1:2 2 ||
    { tail -n 30 "$WORK/one-node-$backend.log"; mn_fail "one-node-$backend: training failed"; }
  echo "one node, $backend: every socket of the ranks: $(tr '\n' ' ' < "$WORK/one-node-$backend.sockets1")"
  outside=$(sockets_outside "127\.0\.0\.1|\[::1\]" "$WORK/one-node-$backend.sockets1")
  [ -z "$outside" ] || mn_fail "one-node-$backend: ranks used addresses beyond loopback: $outside"
  ! grep -q "^LISTEN" "$WORK/one-node-$backend.sockets1" || [ "$backend" = gloo ] ||
    mn_fail "one-node-$backend: a rank listened: $(grep '^LISTEN' "$WORK/one-node-$backend.sockets1")"
done

# A name the nodes lack: the run stops before MPI starts, naming the node and its interfaces.
start=$SECONDS
if launch node1 node1:2,node2:2 4 eth0 "$FT" train --config "$WORK/run.yaml" --set distributed.interface=eth9 \
  --set output.name=missing > "$WORK/missing.log" 2>&1; then
  mn_fail "distributed.interface=eth9 trained"
fi
# Both nodes lack eth9 and the run stops at whichever reports first: the message names that node and lists
# that node's own interfaces (eth0 of nodeN is 10.77.0.N).
reported=$(grep -m1 -oE "node node[12] has no network interface 'eth9'; its interfaces: lo \(127\.0\.0\.1" \
  "$WORK/missing.log" | grep -oE "node[12]" | head -n1)
[ -n "$reported" ] ||
  { cat "$WORK/missing.log"; mn_fail "the missing interface's error does not name the node and its interfaces"; }
grep -q "node $reported has no network interface 'eth9';.* eth0 (10\.77\.0\.${reported#node}[),/ ]" "$WORK/missing.log" ||
  { cat "$WORK/missing.log"; mn_fail "the error does not list $reported's own eth0 address"; }
[ $((SECONDS - start)) -lt 30 ] || mn_fail "a missing interface took $((SECONDS - start)) s to stop the run"
[ ! -e "$WORK/runs/missing.h5" ] || mn_fail "a run that never started left a results file"
echo "distributed.interface=eth9 stopped in $((SECONDS - start)) s: $(grep -m1 'no network interface' "$WORK/missing.log")"
echo "PASS"
