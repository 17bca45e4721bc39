# Helpers shared by the multi-node tests (source after netns_cluster.sh): data, configs, mpirun across the
# namespace nodes, and reading the results file. Every test starts its nodes and removes them on exit.
# shellcheck shell=bash
: "${FUSETRAIN_BIN_DIR:?}" "${FUSETRAIN_TMP:?}"
# shellcheck disable=SC2034  # FT is used by the scripts that source this file
FT=$FUSETRAIN_BIN_DIR/fusetrain
FASHION_MNIST=/usr/share/datasets/fashion-mnist

mn_fail() { echo "FAIL: $*" >&2; exit 1; }

# mn_start NAME NODES [RATE]: a fresh work folder $WORK and NODES nodes, both removed when the script exits.
mn_start() {
  [ -f "$FASHION_MNIST/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
  command -v mpirun > /dev/null || { echo "SKIP: mpirun not found"; exit 77; }
  WORK=$FUSETRAIN_TMP/$1
  rm -rf "$WORK" && mkdir -p "$WORK"
  trap mn_finish EXIT
  netns_up "$2" "${3:-10gbit}"
}

mn_finish() {
  local status=$?
  netns_down
  exit "$status"
}

# mn_prep SHARDS LIMIT: real Fashion-MNIST into $WORK/data.
mn_prep() {
  "$FUSETRAIN_BIN_DIR/fusetrain-prep" --format idx --input "$FASHION_MNIST" --output "$WORK/data" --shards "$1" \
    --limit "$2" > "$WORK/prep.log" || mn_fail "fusetrain-prep failed (see $WORK/prep.log)"
}

# mn_mpirun NODE HOSTS NP ARGS...: mpirun started on NODE over the given --host list, killed after
# MN_TIMEOUT seconds (default 300); inter-node traffic on TCP over the veth subnet, Gloo on the nodes' eth0.
mn_mpirun() {
  local node=$1 hosts=$2 np=$3
  shift 3
  # shellcheck disable=SC2086
  netns_exec "$node" timeout --kill-after=10 "${MN_TIMEOUT:-300}" mpirun --allow-run-as-root --oversubscribe --bind-to none \
    --mca btl_vader_single_copy_mechanism none $NETNS_MPIRUN_ARGS -x FUSETRAIN_GLOO_IFACE=eth0 \
    --host "$hosts" -np "$np" "$@"
}

# mn_h5 FILE DATASET [ATTRIBUTE]: the values of a dataset (one per line) or of a dataset's/group's attribute.
mn_h5() {
  command -v h5dump > /dev/null || { echo "SKIP: h5dump (hdf5-tools) not installed"; exit 77; }
  local what=(-m '%.17g' -d "$2")
  [ -z "${3:-}" ] || what=(-a "$2/$3")
  h5dump "${what[@]}" "$1" | sed -n '/DATA {/,/}/p' | sed '1d;$d' | sed 's/^ *([0-9,]*): *//' | tr ',' '\n' |
    sed 's/^ *//; s/ *$//; /^$/d'
}
