# Several "nodes" on one machine for multi-node tests (source this file, as root): a network namespace per node,
# veth links into bridges in a "head" namespace, each link shaped by tc tbf; nothing touches the host network.
#
# netns_up N [RATE] [DELAY]  starts node1..nodeN: the data network on eth0 (10.77.0.1..N/24, links shaped to RATE,
#                       default 10gbit, in both directions; with DELAY, e.g. 2ms, each node's outgoing frames held that
#                       long, as tc netem's delay on its egress would) and an unshaped control network on eth1
#                       (10.78.0.1..N/24, as a cluster's management network); exit 77 = skip when not root or
#                       namespaces are unavailable. Exports NETNS_PREFIX (namespace names), NETNS_SUBNET (data), NETNS_CTL_SUBNET
#                       and NETNS_MPIRUN_ARGS (the Open MPI options that launch through netns_agent.sh and keep
#                       every byte between nodes on TCP over the data network).
# netns_exec NODE CMD   runs CMD inside NODE, or on head (10.77.0.254 and 10.78.0.254: services such as
#                       slurmctld): its network namespace plus a fresh UTS namespace whose hostname is NODE (what
#                       gethostname, Open MPI, Slurm and the results file see)
# netns_kill_node NODE  SIGKILLs every process of NODE (a node that dies)
# netns_link NODE up|down [DEV]  raises or cuts NODE's data link (or DEV): traffic between nodes stops
# netns_down            kills every process left in the namespaces and deletes them; safe twice and from a trap
#
# What this simulates: separate hosts as the software sees them (hostnames, one Open MPI daemon per node,
# node-local ranks, shared memory only inside a node, all traffic between nodes over TCP on a link of a
# stated bandwidth, a node vanishing, a link going down; with DELAY, a wire's latency: kernels without tc netem
# are common in VMs, so a user-space delay line, tools/bench/delay_line.c, joins a node's eth0, then a TAP device, to
# the bridge, at 9000-byte frames, passing TCP's 64 KiB offloaded frames whole as netem would). What it does not:
# RDMA / InfiniBand / RoCE, GPUDirect, NCCL across hosts, separate file systems, clocks or kernels, and CPU
# isolation (every node shares this machine's cores and memory).
# shellcheck shell=bash

NETNS_SUBNET=10.77.0.0/24
NETNS_CTL_SUBNET=10.78.0.0/24
netns_nodes=()

netns_name() { echo "${NETNS_PREFIX:?netns_up has not run}-$1"; }

netns_exec() {
  local node=$1
  shift
  # shellcheck disable=SC2016  # $0 and $@ belong to the inner shell
  nsenter --net="/run/netns/$(netns_name "$node")" unshare --uts -- sh -c 'hostname "$0" && exec "$@"' "$node" "$@"
}

# The bucket of a tbf must hold a whole GSO packet (64 KiB) and about a millisecond of traffic.
netns_shape() {  # namespace device rate
  local bits burst
  bits=$(numfmt --from=si "$(tr '[:lower:]' '[:upper:]' <<< "${3%bit}")")
  burst=$((bits / 8 / 1000))
  [ "$burst" -ge 262144 ] || burst=262144
  ip -n "$1" link set "$2" gso_max_size 65536 2>/dev/null || true
  tc -n "$1" qdisc replace dev "$2" root tbf rate "$3" burst "$burst" latency 20ms
}

netns_probe() {
  [ "$(id -u)" -eq 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
  local tool
  for tool in ip tc nsenter unshare numfmt; do
    command -v "$tool" > /dev/null || { echo "SKIP: $tool not found"; exit 77; }
  done
  local probe="ftprobe$$"
  if ! ip netns add "$probe" 2>/dev/null; then echo "SKIP: ip netns add fails here"; exit 77; fi
  local ok=1
  ip -n "$probe" link add ftbr type bridge 2>/dev/null || ok=0
  ip -n "$probe" link add ftv0 type veth peer name ftv1 2>/dev/null || ok=0
  [ "$ok" -eq 0 ] || tc -n "$probe" qdisc add dev ftv0 root tbf rate 1gbit burst 256k latency 20ms 2>/dev/null || ok=0
  # shellcheck disable=SC2016  # $0 and $@ belong to the inner shell
  nsenter --net="/run/netns/$probe" unshare --uts true 2>/dev/null || ok=0
  ip netns del "$probe"
  [ "$ok" -eq 1 ] || { echo "SKIP: bridge, veth, tc tbf or UTS namespaces unavailable"; exit 77; }
}

# netns_delay_us DELAY: "2ms", "500us", "0ms" or "" as whole microseconds.
netns_delay_us() {
  case ${1:-0ms} in
    *ms) awk -v d="${1%ms}" 'BEGIN { printf "%d", d * 1000 }' ;;
    *us) echo "${1%us}" ;;
    *) echo "netns: delay '$1' is not N ms or N us" >&2; return 1 ;;
  esac
}

# netns_delayed_link NS HUB I US: NS's eth0 and the hub's p<I> as two TAP devices joined by a delay line (run in
# the hub's namespace, so that netns_down ends it) that holds NS's outgoing frames US microseconds.
netns_delayed_link() {
  local ns=$1 hub=$2 i=$3 us=$4 line=${FUSETRAIN_BIN_DIR:-}/ft-delay-line ready=/tmp/${NETNS_PREFIX}-line$3
  [ -x "$line" ] || { echo "netns: $line not found: build the ft-delay-line target (FUSETRAIN_BIN_DIR)" >&2; return 1; }
  [ -c /dev/net/tun ] || { echo "netns: added latency needs /dev/net/tun (TAP devices)" >&2; return 1; }
  ip netns exec "$hub" "$line" "$us" "t$i" "p$i" > "$ready" 2> "$ready.err" &
  disown
  for _ in $(seq 50); do grep -q '^ready$' "$ready" 2>/dev/null && break; sleep 0.1; done
  grep -q '^ready$' "$ready" || { cat "$ready.err" >&2; echo "netns: the delay line of node$i did not start" >&2; return 1; }
  ip -n "$hub" link set "t$i" netns "$ns"
  ip -n "$ns" link set "t$i" name eth0
  ip -n "$ns" link set eth0 mtu 9000
  ip -n "$hub" link set "p$i" mtu 9000
}

netns_up() {
  local count=$1 rate=${2:-10gbit} i node ns hub delay_us
  delay_us=$(netns_delay_us "${3:-0ms}")
  netns_probe
  export NETNS_PREFIX=${NETNS_PREFIX:-ft$$}
  hub=$(netns_name head)
  ip netns add "$hub"
  netns_nodes=(head)
  ip -n "$hub" link add br0 type bridge
  ip -n "$hub" link add br1 type bridge
  ip -n "$hub" addr add 10.77.0.254/24 dev br0
  ip -n "$hub" addr add 10.78.0.254/24 dev br1
  ip -n "$hub" link set br0 up
  ip -n "$hub" link set br1 up
  ip -n "$hub" link set lo up
  for i in $(seq "$count"); do
    node=node$i
    ns=$(netns_name "$node")
    ip netns add "$ns"
    netns_nodes+=("$node")
    if [ "$delay_us" -gt 0 ]; then
      netns_delayed_link "$ns" "$hub" "$i" "$delay_us"
    else
      ip link add eth0 netns "$ns" type veth peer name "p$i" netns "$hub"
    fi
    ip -n "$hub" link set "p$i" master br0 up
    ip link add eth1 netns "$ns" type veth peer name "c$i" netns "$hub"
    ip -n "$hub" link set "c$i" master br1 up
    ip -n "$ns" addr add "10.77.0.$i/24" dev eth0
    ip -n "$ns" addr add "10.78.0.$i/24" dev eth1
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set eth1 up
    ip -n "$ns" link set lo up
    netns_shape "$ns" eth0 "$rate"
    netns_shape "$hub" "p$i" "$rate"
  done
  # Open MPI: launch through the agent instead of ssh, one daemon per node started from mpirun's node,
  # TCP between nodes on the veth subnet only (shared memory and self inside a node).
  NETNS_MPIRUN_ARGS="--mca plm_rsh_agent $(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/netns_agent.sh"
  NETNS_MPIRUN_ARGS+=" --mca plm_rsh_no_tree_spawn 1 --mca btl tcp,self,vader"
  NETNS_MPIRUN_ARGS+=" --mca btl_tcp_if_include $NETNS_SUBNET --mca oob_tcp_if_include $NETNS_SUBNET"
  export NETNS_SUBNET NETNS_CTL_SUBNET NETNS_MPIRUN_ARGS
  echo "netns: $count node(s) up (prefix $NETNS_PREFIX, $NETNS_SUBNET, links $rate${3:+, $3 added to every node egress})"
}

netns_pids() { ip netns pids "$(netns_name "$1")" 2>/dev/null || true; }

netns_kill_node() {
  local pids
  for _ in 1 2 3 4 5; do
    pids=$(netns_pids "$1")
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    sleep 0.2
  done
}

netns_link() {  # node up|down [device]
  ip -n "$(netns_name "$1")" link set "${3:-eth0}" "$2"
}

netns_down() {
  local node
  [ -n "${NETNS_PREFIX:-}" ] || return 0
  for node in "${netns_nodes[@]}"; do netns_kill_node "$node"; done
  for node in "${netns_nodes[@]}"; do ip netns del "$(netns_name "$node")" 2>/dev/null || true; done
  netns_nodes=()
  rm -f /tmp/"${NETNS_PREFIX}"-line*
}
