#!/usr/bin/env bash
# A lost node and a network that refuses traffic between nodes, on 2 namespace nodes x 2 ranks: killing every
# process of node2 mid-training must stop node1's ranks with an error naming ranks 2 and 3 within the stall
# timeout; a Gloo data link that is down from the start must give a clear start-up error, not a hang.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=netns_cluster.sh
source "$here/netns_cluster.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh"
mn_start node_loss 2
mn_prep 4 400
stall=8
cat > "$WORK/run.yaml" <<YAML
model: {name: simple_cnn}
data: {path: $WORK/data, batch_size: 8, limit_train: 400, limit_test: 40}
optimizer: {name: sgd, lr: 0.01}
train: {epochs: 1000, seed: 1, device: cpu, threads: 1, checkpoint_every: 0}
distributed: {stall_timeout_s: $stall}
output: {dir: $WORK/runs}
YAML
failed=()

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# expect CASE LOG PATTERN: the case's output must match PATTERN (extended regular expression).
expect() {
  grep -Eq "$3" "$2" && return 0
  echo "FAIL [$1]: no line matches: $3" >&2
  sed 's/^/    | /' "$2" | tail -n 25 >&2
  return 1
}

# expect_within CASE SECONDS LIMIT
expect_within() {
  awk -v s="$2" -v l="$3" 'BEGIN { exit !(s <= l) }' && return 0
  echo "FAIL [$1]: took $2 s, more than $3 s" >&2
  return 1
}

# kill_node BACKEND RECOVERY HOW: node2 disappears during training: HOW=crash kills its processes (the
# kernel resets their connections), HOW=vanish cuts its links first (no reset arrives: silence, as when a
# node loses power). With RECOVERY=recovery (mpirun --enable-recovery) mpirun keeps node1's ranks alive, so
# fusetrain's own stall detection must stop them; with RECOVERY=plain, Open MPI may end the job first.
kill_node() {
  local name="kill_$1_$2_$3" extra="" start took status=0 r
  [ "$2" = recovery ] && extra=--enable-recovery
  local log=$WORK/$name.log
  # shellcheck disable=SC2086
  MN_TIMEOUT=120 mn_mpirun node1 node1:2,node2:2 4 $extra "$FT" train --config "$WORK/run.yaml" \
    --set "distributed.backend=$1" --set "output.name=$name" > "$log" 2>&1 &
  local job=$!
  for _ in $(seq 240); do grep -q "^epoch   1/" "$log" && break; sleep 0.5; done
  grep -q "^epoch   1/" "$log" || { echo "FAIL [$name]: no epoch finished"; tail -n 20 "$log"; return 1; }
  if [ "$3" = vanish ]; then netns_link node2 down eth0; netns_link node2 down eth1; fi
  netns_kill_node node2
  start=$(now)
  # node1's ranks must stop in time; with --enable-recovery mpirun may then go on waiting for node2's daemon,
  # so only the plain job's own end is awaited.
  for _ in $(seq $(((stall + 30) * 5))); do
    if ! pgrep -f "^$FT train --config $WORK/run.yaml --set distributed.backend=$1 --set output.name=$name" \
         > /dev/null; then
      if [ "$2" = recovery ] || ! kill -0 "$job" 2>/dev/null; then break; fi
    fi
    sleep 0.2
  done
  took=$(elapsed "$start")
  netns_kill_node node1
  wait "$job" || status=$?
  netns_link node2 up eth0
  netns_link node2 up eth1
  echo "[$name] node2 gone ($3): node1's ranks ended after $took s (job status $status)"
  # Measured 0.0-8.0 s over the five cases (tests/README.md, "Time bounds"): the stall timeout plus slack.
  expect_within "$name" "$took" $((stall + 20)) || return 1
  if [ "$2:$3" = plain:crash ]; then
    [ "$status" -ne 0 ] || { echo "FAIL [$name]: exit status 0"; return 1; }
    expect "$name" "$log" "Peer host: +node2|Remote daemon: .* on node node2" || return 1
  else
    for r in 0 1; do
      expect "$name" "$log" "rank $r \(node1\): error: .*rank 2 \(node2\).*rank 3 \(node2\)" || return 1
    done
  fi
  [ "$3" = crash ] || expect "$name" "$log" "rank 2 \(node2\) not heard from .*\(dead or hung\)" || return 1
  echo "PASS [$name]"
}

# refused_gloo: node2's data link is down before the start, with all of MPI on the control network, so only
# Gloo's own connections (FUSETRAIN_GLOO_IFACE=eth0) find no path between the nodes.
refused_gloo() {
  local name=refused_gloo start took status=0
  local log=$WORK/$name.log
  netns_link node2 down eth0
  start=$(now)
  NETNS_MPIRUN_ARGS=${NETNS_MPIRUN_ARGS//$NETNS_SUBNET/$NETNS_CTL_SUBNET} MN_TIMEOUT=120 \
    mn_mpirun node1 node1:2,node2:2 4 "$FT" train --config "$WORK/run.yaml" --set distributed.backend=gloo \
    --set "output.name=$name" > "$log" 2>&1 || status=$?
  took=$(elapsed "$start")
  netns_link node2 up eth0
  echo "[$name] data link of node2 down: the job ended with status $status after $took s"
  [ "$status" -ne 0 ] || { echo "FAIL [$name]: exit status 0"; return 1; }
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then echo "FAIL [$name]: hung until killed"; return 1; fi
  # Measured 5.2-5.3 s (tests/README.md, "Time bounds"); Gloo's own connect retries may take longer.
  expect_within "$name" "$took" $((stall + 40)) || return 1
  expect "$name" "$log" "gloo backend: rank [0-3] \(node[12]\) could not connect to its peers" || return 1
  ! grep -q "^epoch " "$log" || { echo "FAIL [$name]: trained without a network"; return 1; }
  echo "PASS [$name]"
}

for check in "kill_node mpi recovery crash" "kill_node gloo recovery crash" "kill_node mpi plain crash" \
             "kill_node mpi recovery vanish" "kill_node gloo recovery vanish" \
             refused_gloo; do
  # shellcheck disable=SC2086
  ( $check ) || failed+=("$check")
  for node in node1 node2; do netns_kill_node "$node"; done
done
[ "${#failed[@]}" -eq 0 ] || mn_fail "${#failed[@]} case(s) failed: ${failed[*]}"
echo "PASS"
