#!/usr/bin/env bash
# The same training started three ways: one process with no launcher, 2 ranks under mpirun, 2 ranks under
# srun (inside a SLURM allocation, or on a private one-node cluster with LOCAL_SLURM=1); tabulates the times.
#
# Usage: tools/bench/launchers.sh CONFIG OUT [--set key=value ...]   (the --set options go to every run)
# Writes OUT/results/launch-{single,mpirun,srun}.h5, OUT/logs/, and OUT/launchers.tsv (launcher, ranks,
# wall seconds of the whole command, status or the reason it was not run); prints the table.
# Environment: FUSETRAIN_BIN (default build/bin/fusetrain), MPIRUN (default mpirun --oversubscribe
# --bind-to none [--allow-run-as-root]), SRUN (default srun --mpi=pmix, or FT_LAUNCHER of the private
# cluster), RANKS (default 2), LOCAL_SLURM=1 to start tests/slurm/local_cluster.sh when not in a job.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '4,10p' "$0"; exit 2; }
config=$1 out=$2
shift 2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${FUSETRAIN_BIN:-$root/build/bin/fusetrain}
ranks=${RANKS:-2}
default_mpirun="mpirun --oversubscribe --bind-to none"
[ "$(id -u)" -ne 0 ] || default_mpirun+=" --allow-run-as-root"
mpirun=${MPIRUN:-$default_mpirun}
mkdir -p "$out/results" "$out/logs"
table=$out/launchers.tsv
printf 'launcher\tranks\twall_s\tstatus\n' > "$table.partial"

# run NAME RANKS LAUNCHER...: trains CONFIG under LAUNCHER (none for a single process) and records its time.
run() {
  local name=$1 n=$2
  shift 2
  local log=$out/logs/launch-$name.log start end status=0
  rm -f "$out/results/launch-$name.h5"
  start=$(date +%s.%N)
  "$@" "$bin" train --config "$config" "${sets[@]}" --set "output.dir=$out/results" \
    --set "output.name=launch-$name" > "$log" 2>&1 || status=$?
  end=$(date +%s.%N)
  if [ "$status" -eq 0 ] && [ -f "$out/results/launch-$name.h5" ]; then
    awk -v n="$name" -v r="$n" -v a="$start" -v b="$end" 'BEGIN { printf "%s\t%s\t%.2f\tok\n", n, r, b - a }' \
      >> "$table.partial"
  else
    printf '%s\t%s\t\tfailed (exit %s, see %s)\n' "$name" "$n" "$status" "$log" >> "$table.partial"
  fi
}

sets=("$@")
run single 1
# shellcheck disable=SC2086
run mpirun "$ranks" $mpirun -n "$ranks"

cluster_up=0
have_slurm() {
  local tool
  for tool in slurmctld slurmd sbatch srun scontrol sinfo scancel; do command -v "$tool" > /dev/null || return 1; done
}
if [ -z "${SLURM_JOB_ID:-}" ] && [ "${LOCAL_SLURM:-0}" = 1 ] && have_slurm; then
  # shellcheck source=../../tests/slurm/local_cluster.sh
  source "$root/tests/slurm/local_cluster.sh"
  trap cluster_stop EXIT
  cluster_start "$out/cluster" > "$out/logs/cluster.log" 2>&1 && cluster_up=1
fi
if [ -n "${SLURM_JOB_ID:-}" ]; then
  # shellcheck disable=SC2086
  run srun "$ranks" ${SRUN:-srun --mpi=pmix} -n "$ranks"
elif [ "$cluster_up" = 1 ] && [[ "$FT_LAUNCHER" == srun* ]]; then
  # srun outside a job makes its own allocation on the private cluster.
  # shellcheck disable=SC2086
  run srun "$ranks" $FT_LAUNCHER -n "$ranks" --cpus-per-task=1
elif [ "$cluster_up" = 1 ]; then
  printf 'srun\t%s\t\tnot run: this SLURM has no PMIx plugin to start Open MPI ranks\n' "$ranks" >> "$table.partial"
else
  printf 'srun\t%s\t\tnot run: no SLURM allocation here (run inside a job, or LOCAL_SLURM=1 with slurm-wlm)\n' \
    "$ranks" >> "$table.partial"
fi
mv "$table.partial" "$table"
column -t -s $'\t' "$table" 2>/dev/null || cat "$table"
