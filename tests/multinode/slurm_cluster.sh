# A private multi-node SLURM cluster on the namespace nodes of netns_cluster.sh (source both; as root):
# slurmctld on the head (10.77.0.254), one slurmd per node (NodeName=nodeN NodeAddr=10.77.0.N, spool, pid
# and log per node through %n), auth/none; state, logs and config in a temporary folder, nothing installed.
#
# mslurm_start DIR N   starts the daemons on head and node1..nodeN (exit 77 = skip without slurm-wlm or the
#                      pmix plugin), waits until every node is idle, exports SLURM_CONF; MSLURM_SETTINGS
#                      (lines) are added to slurm.conf (e.g. SlurmdTimeout=10 for node-failure tests)
# mslurm_slurmd NODE   starts NODE's slurmd (again, after netns_kill_node)
# mslurm CMD...        runs a client command (sbatch, scontrol, squeue, ...) on the head
# mslurm_wait JOB S    waits up to S seconds until JOB has ended; prints its state
# mslurm_await JOB S FILE PATTERN  cluster_await on this cluster: PATTERN in FILE, or fail once JOB ends
# mslurm_release JOB   releases the requeued JOB (cluster_release of tests/slurm/local_cluster.sh)
# mslurm_finish        the EXIT trap of a Slurm test: the job and daemon logs when it failed, then
#                      mslurm_stop and netns_down, keeping the test's exit status
# mslurm_stop          cancels the jobs and stops the daemons; safe twice and from a trap (netns_down kills
#                      whatever is left in the namespaces)
# The same Slurm settings as tests/slurm/local_cluster.sh (Debian 12, Slurm 22.05, auth/none + cred/none).
# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR source=../slurm/local_cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/../slurm/local_cluster.sh"

mslurm() { netns_exec head "$@"; }

mslurm_config() {  # dir nodes
  local dir=$1 count=$2 memory cpus i
  memory=$(awk -v n="$count" '/MemTotal/ {print int($2 / 1024 * 0.8 / n)}' /proc/meminfo)
  cpus=$(nproc)
  cat <<EOF
ClusterName=fusetrain-multinode
SlurmctldHost=head(10.77.0.254)
SlurmctldPort=6817
SlurmdPort=6818
$(slurm_conf_settings "$dir")
${MSLURM_SETTINGS:-}
EOF
  for i in $(seq "$count"); do
    echo "NodeName=node$i NodeAddr=10.77.0.$i CPUs=$cpus RealMemory=$memory State=UNKNOWN"
  done
  echo "PartitionName=test Nodes=node[1-$count] Default=YES MaxTime=INFINITE State=UP"
}

mslurm_start() {
  local dir=$1 count=$2 tool i
  for tool in slurmctld slurmd sbatch srun scontrol sinfo scancel; do
    command -v "$tool" > /dev/null || { echo "SKIP: $tool not found (apt-get install slurm-wlm)"; exit 77; }
  done
  rm -rf "$dir" && mkdir -p "$dir"/{state,spool,log,tmp}
  mslurm_config "$dir" "$count" > "$dir/slurm.conf"
  SLURM_CONF=$dir/slurm.conf srun --mpi=list 2>&1 | grep -qw pmix ||
    { echo "SKIP: Slurm has no pmix plugin (srun --mpi=pmix)"; exit 77; }
  export SLURM_CONF=$dir/slurm.conf
  mslurm slurmctld -D -i -f "$SLURM_CONF" > "$dir/log/slurmctld.out" 2>&1 &
  for i in $(seq "$count"); do
    mkdir -p "$dir/spool/node$i" "$dir/tmp/node$i"
    mslurm_slurmd "node$i"
  done
  for _ in $(seq 60); do
    if [ "$(mslurm sinfo -h -o %T 2>/dev/null | sort -u)" = idle ] &&
       [ "$(mslurm sinfo -h -N -o %N 2>/dev/null | sort -u | wc -l)" -eq "$count" ]; then
      echo "slurm: $count node(s) idle, slurmctld on head (10.77.0.254)"
      return 0
    fi
    sleep 1
  done
  echo "slurm: the nodes did not become idle in 60 s" >&2
  mslurm sinfo -N >&2 || true
  tail -n 20 "$dir"/log/*.out "$dir"/log/*.log >&2 || true
  return 1
}

mslurm_slurmd() {
  local dir
  dir=$(dirname "$SLURM_CONF")
  netns_exec "$1" slurmd -D -N "$1" -f "$SLURM_CONF" >> "$dir/log/slurmd-$1.out" 2>&1 &
}

mslurm_finish() {
  local status=$?
  cluster_report_failure "$status" "$WORK"
  mslurm_stop
  netns_down
  exit "$status"
}

mslurm_stop() {
  [ -n "${SLURM_CONF:-}" ] || return 0
  mslurm scancel --quiet --user="$(id -un)" 2>/dev/null || true
  for _ in $(seq 30); do
    mslurm squeue -h -t RUNNING,COMPLETING,CONFIGURING 2>/dev/null | grep -q . || break
    sleep 1
  done
  unset SLURM_CONF
}

mslurm_wait() {
  # shellcheck disable=SC2034  # read by cluster_wait
  local cluster_client=(mslurm)
  cluster_wait "$@"
}

mslurm_await() {
  # shellcheck disable=SC2034  # read by cluster_await
  local cluster_client=(mslurm)
  cluster_await "$@"
}

mslurm_release() {
  # shellcheck disable=SC2034  # read by cluster_release
  local cluster_client=(mslurm)
  cluster_release "$@"
}
