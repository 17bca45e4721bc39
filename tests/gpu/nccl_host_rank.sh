#!/usr/bin/env bash
# One rank of a GPU case as an NCCL host of its own (the several-NCCL-hosts mode of tests/gpu/lib.sh): started by
# mpirun, it runs fusetrain with NCCL_HOSTID naming its rank, so that ranks sharing one GPU talk over NCCL's
# network transport; outside mpirun it runs fusetrain as it is.
set -euo pipefail
program=${FUSETRAIN_NCCL_HOST_PROGRAM:?set FUSETRAIN_NCCL_HOST_PROGRAM to the fusetrain binary}
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-}}
[ -z "$rank" ] || export NCCL_HOSTID="fusetrain-nccl-host-$rank"
exec "$program" "$@"
