#!/usr/bin/env bash
# 2 nodes x 2 ranks must train to the same result as 1 node x 4 ranks, with MPI and with Gloo over TCP between
# network-namespace nodes; the results file must record 2 nodes and each rank's hostname and local rank.
# The runs use distributed.reproducible, whose sums do not depend on the topology, so the comparison is bit for
# bit: in the default mode the all-reduce's order (and the bucket sizes autotune picks from timings) move the
# last digits, so an exact comparison there would depend on the machine's load.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=netns_cluster.sh
source "$here/netns_cluster.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh"
mn_start train 2
mn_prep 4 2000
cat > "$WORK/run.yaml" <<YAML
model: {name: simple_cnn, dropout: 0.1}
data: {path: $WORK/data, batch_size: 32, limit_train: 1600, limit_test: 400, shuffle: global}
optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
train: {epochs: 2, seed: 3, device: cpu, threads: 1}
distributed: {stall_timeout_s: 60, reproducible: true, micro_batches: 4}
output: {dir: $WORK/runs}
YAML

# The per-epoch metrics that must not depend on where the ranks run, with all 17 digits.
metrics() {
  local column
  for column in epoch train_loss train_acc test_loss test_acc lr weights_digest; do
    echo "$column: $(mn_h5 "$WORK/runs/$1.h5" "/epochs/$column" | tr '\n' ' ')"
  done
}

train() {  # name backend hosts
  echo "--- $1: backend $2 on $3"
  mn_mpirun node1 "$3" 4 "$FT" train --config "$WORK/run.yaml" --set "distributed.backend=$2" \
    --set "output.name=$1" > "$WORK/$1.log" 2>&1 ||
    { tail -n 30 "$WORK/$1.log"; mn_fail "$1: training failed"; }
  grep "^fusetrain\|^epoch" "$WORK/$1.log"
}

for backend in mpi gloo; do
  train "$backend-1x4" "$backend" node1:4
  train "$backend-2x2" "$backend" node1:2,node2:2
  grep -q "4 rank(s) on 1 node(s), backend $backend" "$WORK/$backend-1x4.log" || mn_fail "1x4 is not one node"
  grep -q "4 rank(s) on 2 node(s), backend $backend" "$WORK/$backend-2x2.log" || mn_fail "2x2 is not two nodes"
  [ "$(mn_h5 "$WORK/runs/$backend-2x2.h5" /provenance node_count)" = 2 ] || mn_fail "$backend-2x2.h5: node_count is not 2"
  [ "$(mn_h5 "$WORK/runs/$backend-1x4.h5" /provenance node_count)" = 1 ] || mn_fail "$backend-1x4.h5: node_count is not 1"
  hosts=$(mn_h5 "$WORK/runs/$backend-2x2.h5" /ranks/hostname | tr -d '"' | tr '\n' ' ')
  [ "$hosts" = "node1 node1 node2 node2 " ] || mn_fail "$backend-2x2.h5: hostnames are '$hosts'"
  locals=$(mn_h5 "$WORK/runs/$backend-2x2.h5" /ranks/local_rank | tr '\n' ' ')
  [ "$locals" = "0 1 0 1 " ] || mn_fail "$backend-2x2.h5: local ranks are '$locals'"
  diff <(metrics "$backend-1x4") <(metrics "$backend-2x2") ||
    mn_fail "$backend: 2 nodes x 2 ranks did not train to the same metrics as 1 node x 4 ranks"
  echo "$backend: 2x2 across nodes and 1x4 on one node give identical per-epoch metrics"
done
"$FT" report "$WORK"/runs/*.h5
echo "PASS"
