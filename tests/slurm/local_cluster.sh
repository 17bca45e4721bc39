# A private one-node SLURM cluster for tests (source this file): slurmctld and slurmd on this host with a
# generated slurm.conf, state, spool, logs and ports in a temporary folder; nothing is installed or left.
#
# cluster_start DIR [GPUS]  starts the daemons (exit 77 = skip when Slurm is not installed), waits until the
#                     node is idle, exports SLURM_CONF and FT_LAUNCHER (the rank launcher that works here);
#                     GPUS > 0 gives the node that many GPUs as a gres/gpu backed by stand-in device files
#                     (character devices DIR/dev/gpuN made like /dev/null), so that srun --gpus-per-task
#                     really binds tasks to GPUs and sets their CUDA_VISIBLE_DEVICES
# cluster_stop        cancels the jobs, then stops both daemons; safe to call twice and from an EXIT trap
# cluster_wait JOB S  waits up to S seconds until every task of JOB has ended; prints their states
# cluster_await JOB S FILE PATTERN  waits up to S seconds until FILE has a line matching PATTERN (grep -E);
#                     fails at once, naming the job's state, if the job ends before that
# slurm_conf_settings DIR  the slurm.conf settings shared with tests/multinode/slurm_cluster.sh
# cluster_release JOB, cluster_report_failure STATUS DIR: see below
# Found on Debian 12 (Slurm 22.05): auth/none + cred/none work for root; the pmix plugin (mpi_pmix_v4) starts
# Open MPI 4.1 ranks; Debian's Open MPI has no PMI-2 client, so the fallback is mpirun inside the allocation.
# shellcheck shell=bash

cluster_pids=()
# Set by a caller whose client commands must run elsewhere (tests/multinode: inside the head namespace).
cluster_client=()

# slurm_conf_settings DIR: the slurm.conf settings every test cluster shares (no hosts, ports or nodes);
# a slurmd's spool, pid file, log and TmpFS are DIR/.../%n, per node name.
slurm_conf_settings() {
  local dir=$1
  cat <<EOF
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
TmpFS=$dir/tmp/%n
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerParameters=sched_interval=5
MpiDefault=none
ReturnToService=2
KillWait=15
MinJobAge=3600
EOF
}

cluster_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# cluster_gpus DIR GPUS: the stand-in device files (/dev/null's major and minor) and gres.conf beside
# slurm.conf; exit 77 where device files cannot be made (not root, or no CAP_MKNOD).
cluster_gpus() {
  local dir=$1 gpus=$2 i major minor
  major=$((16#$(stat -c '%t' /dev/null))) minor=$((16#$(stat -c '%T' /dev/null)))
  mkdir -p "$dir/dev"
  for ((i = 0; i < gpus; i++)); do
    mknod "$dir/dev/gpu$i" c "$major" "$minor" 2> "$dir/log/mknod.err" ||
      { echo "SKIP: cannot make stand-in GPU device files: $(cat "$dir/log/mknod.err")"; exit 77; }
  done
  echo "Name=gpu File=$dir/dev/gpu[0-$((gpus - 1))]" > "$dir/gres.conf"
}

cluster_start() {
  local dir=$1 gpus=${2:-0} tool gres="" node_gres=""
  for tool in slurmctld slurmd sbatch srun scontrol sinfo scancel; do
    command -v "$tool" > /dev/null || { echo "SKIP: $tool not found (apt-get install slurm-wlm)"; exit 77; }
  done
  rm -rf "$dir" && mkdir -p "$dir"/{state,spool/ftnode,log,tmp/ftnode}
  local memory cpus
  memory=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
  cpus=${FT_CLUSTER_CPUS:-$(nproc)}
  if [ "$gpus" -gt 0 ]; then
    cluster_gpus "$dir" "$gpus"
    gres="GresTypes=gpu"$'\n' node_gres=" Gres=gpu:$gpus"
  fi
  cat > "$dir/slurm.conf" <<EOF
ClusterName=fusetrain-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$(cluster_free_port)
SlurmdPort=$(cluster_free_port)
$(slurm_conf_settings "$dir")
${gres}NodeName=ftnode NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory$node_gres State=UNKNOWN
PartitionName=test Nodes=ftnode Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -D -i -f "$SLURM_CONF" > "$dir/log/slurmctld.out" 2>&1 &
  cluster_pids+=($!)
  slurmd -D -N ftnode -f "$SLURM_CONF" > "$dir/log/slurmd.out" 2>&1 &
  cluster_pids+=($!)
  for _ in $(seq 60); do
    if [ "$(sinfo -h -n ftnode -o %T 2>/dev/null)" = idle ]; then
      # srun's PMIx plugin starts Open MPI ranks directly; without it, mpirun reads the allocation.
      if srun --mpi=list 2>&1 | grep -qw pmix; then
        FT_LAUNCHER="srun --mpi=pmix"
      else
        FT_LAUNCHER="mpirun$( [ "$(id -u)" -ne 0 ] || echo " --allow-run-as-root")"
      fi
      export FT_LAUNCHER
      echo "cluster: up ($cpus CPUs, launcher: $FT_LAUNCHER)"
      return 0
    fi
    sleep 1
  done
  echo "cluster: the node did not become idle in 60 s" >&2
  tail -n 20 "$dir"/log/*.out >&2
  return 1
}

cluster_stop() {
  local pid
  if [ "${#cluster_pids[@]}" -gt 0 ]; then
    # Jobs first, so that no slurmstepd or rank outlives the daemons.
    scancel --quiet --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 30); do
      squeue -h -t RUNNING,COMPLETING,CONFIGURING 2>/dev/null | grep -q . || break
      sleep 1
    done
  fi
  for pid in "${cluster_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${cluster_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  cluster_pids=()
}

# cluster_report_failure STATUS DIR: after a test that failed (STATUS neither 0 nor 77), the job logs DIR/*.out
# and the daemons' logs DIR/cluster/log/*.log.
cluster_report_failure() {
  local status=$1 dir=$2
  if [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then
    echo "--- job log and daemon logs (test failed with status $status)"
    tail -n 40 "$dir"/*.out "$dir"/cluster/log/*.log 2>/dev/null || true
  fi
}

# cluster_release JOB: once the requeued JOB is pending, makes it eligible 3 s later instead of after
# slurmctld's hold of about two minutes; not within the second slurmd revoked the old credential, or it
# refuses the launch ("credential revoked"). A job Slurm started again without the hold (it may requeue
# a job itself when a node fails) needs no release: once it has restarted and is running or has ended,
# there is nothing to do. Fails if neither happens within 60 s.
cluster_release() {
  local job=$1 info
  for _ in $(seq 60); do
    info=$("${cluster_client[@]}" scontrol show job "$job" -o 2>/dev/null || true)
    if grep -q "JobState=PENDING" <<< "$info"; then
      "${cluster_client[@]}" scontrol update JobId="$job" StartTime=now+3 2>/dev/null && return 0
    elif cluster_restarted "$info"; then
      echo "job $job was started again without waiting for a release"
      return 0
    fi
    sleep 1
  done
  echo "job $job was neither pending nor started again within 60 s of its requeue" >&2
  return 1
}

# cluster_restarted INFO: whether a job's `scontrol show job -o` line shows it restarted at least once and
# now running or ended (not pending, requeueing or completing its previous run).
cluster_restarted() {
  grep -Eq "Restarts=[1-9]" <<< "$1" &&
    ! grep -Eq "JobState=(PENDING|REQUEUE[A-Z_]*|COMPLETING|CONFIGURING)( |$)" <<< "$1"
}

# cluster_live INFO: whether a job's `scontrol show job -o` line shows it queued, running or being requeued.
cluster_live() {
  grep -Eq 'JobState=(PENDING|RUNNING|REQUEUE|COMPLETING|CONFIGURING|SUSPENDED)' <<< "$1"
}

cluster_await() {
  local job=$1 seconds=$2 file=$3 pattern=$4 info
  for _ in $(seq "$((seconds * 2))"); do
    grep -Eq "$pattern" "$file" 2>/dev/null && return 0
    info=$("${cluster_client[@]}" scontrol show job "$job" -o 2>/dev/null || true)
    if [ -n "$info" ] && ! cluster_live "$info"; then
      grep -Eq "$pattern" "$file" 2>/dev/null && return 0
      echo "job $job ended ($(grep -o 'JobState=[A-Z_]* .*ExitCode=[0-9:]*' <<< "$info" |
        sed 's/ .* / /')) before $file showed '$pattern'" >&2
      return 1
    fi
    sleep 0.5
  done
  echo "$file did not show '$pattern' within $seconds s" >&2
  return 1
}

cluster_wait() {
  local job=$1 seconds=$2 states
  for _ in $(seq "$seconds"); do
    states=$("${cluster_client[@]}" scontrol show job "$job" -o 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort | uniq -c | tr -s ' \n' ' ')
    if [ -n "$states" ] && ! cluster_live "$states"; then
      echo "job $job:$states"
      return 0
    fi
    sleep 1
  done
  echo "job $job did not end in $seconds s:$states" >&2
  return 1
}
