#!/usr/bin/env bash
# The namespace cluster's added latency (netns_up N RATE DELAY, a delay line on each node's egress where the
# kernel has no tc netem): a UDP round trip between two nodes takes at least twice DELAY and less than four times
# it, and without DELAY well under it. Minimum round trips of 40 probes: the delay line only ever adds time.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=netns_cluster.sh
source "$here/netns_cluster.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh"
command -v python3 > /dev/null || { echo "SKIP: python3 not found"; exit 77; }
trap netns_down EXIT

# The smallest of 40 UDP round trips node1 -> node2 -> node1, in microseconds.
min_round_trip_us() {
  netns_exec node2 python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("10.77.0.2", 5999)); s.settimeout(30)
for _ in range(40):
    data, peer = s.recvfrom(64); s.sendto(data, peer)' &
  local echo=$!
  sleep 0.5
  netns_exec node1 python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
best = float("inf")
for i in range(40):
    t = time.perf_counter(); s.sendto(b"%d" % i, ("10.77.0.2", 5999)); s.recvfrom(64)
    best = min(best, time.perf_counter() - t)
print(int(best * 1e6))'
  wait "$echo"
}

netns_up 2 1gbit > /dev/null
plain=$(min_round_trip_us)
netns_down
netns_up 2 1gbit 2ms
delayed=$(min_round_trip_us)
echo "minimum UDP round trip: ${plain} us without added latency, ${delayed} us with 2 ms on each node's egress"
[ "$plain" -lt 1000 ] || mn_fail "round trip without added latency ${plain} us, expected under 1 ms"
[ "$delayed" -ge 4000 ] || mn_fail "round trip with 2 ms each way ${delayed} us, expected at least 4 ms"
[ "$delayed" -lt 8000 ] || mn_fail "round trip with 2 ms each way ${delayed} us, expected under 8 ms"
echo "PASS: the delay line adds its latency to each direction, once"
