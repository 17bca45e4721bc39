#!/usr/bin/env bash
# One training run on a workstation: NP ranks under mpirun (one per GPU, or sharing the CPU cores).
# Stop it with Ctrl-C or SIGUSR1 (mpirun passes that on): the ranks checkpoint and exit 75; run again to resume.
#
# Usage: CONFIG=configs/quickstart.yaml NP=2 jobs/workstation/run.sh [--set key=value ...]
# (arguments go to `fusetrain train`). Resuming needs a fixed output.name (RUN_NAME or the config's).
# Environment:
#   CONFIG         the YAML config (required)
#   NP             number of ranks (default 2)
#   FUSETRAIN_BIN  the fusetrain binary (default: build/bin/fusetrain of this checkout, else fusetrain on PATH)
#   MPIRUN         launcher and its flags (default: mpirun --oversubscribe --bind-to none, plus
#                  --allow-run-as-root for root)
#   RUN_NAME       sets output.name (default: the config's)
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

status=0
# shellcheck disable=SC2086
$mpirun -np "${NP:-2}" "$bin" train --config "$config" "${args[@]}" || status=$?
if [ "$status" -eq 75 ]; then
  echo "run.sh: the run checkpointed (exit 75); run the same command again to resume"
fi
exit "$status"
