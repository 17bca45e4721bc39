#!/usr/bin/env bash
# One training run on a workstation: NP ranks under mpirun (one per GPU, or sharing the CPU cores).
# Stop it with Ctrl-C or SIGUSR1 (mpirun passes that on): the ranks checkpoint and exit 75; run again to resume.
#
# Usage: CONFIG=configs/quickstart.yaml NP=2 jobs/workstation/run.sh [--set key=value ...]
# (arguments go to `fusetrain train`). Resuming needs a fixed output.name (RUN_NAME or the config's).
# Environment:
#   CONFIG         the YAML config (required)
#   NP             number of ranks (default 2)
#   FUSETRAIN_BIN  the fusetrain binary (default: build/bin/fusetrain of this checkout, else fusetrain on PATH;
#                  `module load fusetrain` sets it to the installed one)
#   MPIRUN         launcher and its flags (default: mpirun --oversubscribe --bind-to none, plus
#                  --allow-run-as-root for root)
#   RUN_NAME       sets output.name (default: the config's)
#   FUSETRAIN_LOOPBACK_ONLY  1 (default): when MPIRUN names no other host (no --host, -H, --hostfile), mpirun
#                  and the ranks listen on loopback only (build/lib/libft_loopback_only.so preloaded, Open MPI's
#                  out-of-band channel on lo); 0: as mpirun chooses (it listens on every interface)
#   FUSETRAIN_LOOPBACK_LIB  that library (default: lib/ beside the binary's folder; the module file sets it)
set -euo pipefail

config=${CONFIG:?set CONFIG to the YAML config, e.g. CONFIG=configs/quickstart.yaml $0}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${FUSETRAIN_BIN:-}
if [ -z "$bin" ]; then
  bin=fusetrain
  [ ! -x "$root/build/bin/fusetrain" ] || bin=$root/build/bin/fusetrain
fi
default_mpirun="mpirun --oversubscribe --bind-to none"
[ "$(id -u)" -ne 0 ] || default_mpirun+=" --allow-run-as-root"
mpirun=${MPIRUN:-$default_mpirun}
args=("$@")
[ -z "${RUN_NAME:-}" ] || args+=(--set "output.name=$RUN_NAME")

# All ranks on this machine: nothing needs to listen beyond loopback.
launch=()
if [ "${FUSETRAIN_LOOPBACK_ONLY:-1}" = 1 ] && ! grep -Eq -- '(^| )(--host|-H|--hostfile|--machinefile)( |=|$)' <<< "$mpirun"; then
  shim=${FUSETRAIN_LOOPBACK_LIB:-$(cd "$(dirname "$(command -v "$bin")")/.." && pwd)/lib/libft_loopback_only.so}
  if [ -f "$shim" ]; then
    launch=(env "LD_PRELOAD=$shim${LD_PRELOAD:+:$LD_PRELOAD}")
    mpirun+=" --mca oob_tcp_if_include lo"
  else
    echo "run.sh: $shim not built (cmake --build build --target ft_loopback_only): mpirun listens on every interface" >&2
  fi
fi

status=0
# shellcheck disable=SC2086
${launch[@]+"${launch[@]}"} $mpirun -np "${NP:-2}" "$bin" train --config "$config" "${args[@]}" || status=$?
if [ "$status" -eq 75 ]; then
  echo "run.sh: the run checkpointed (exit 75); run the same command again to resume"
fi
exit "$status"
