#!/usr/bin/env bash
# Open MPI launch agent (plm_rsh_agent) for the nodes of netns_cluster.sh: called as `netns_agent.sh HOST CMD...`
# as ssh would be, it runs CMD through a shell inside HOST's network namespace with HOST as its hostname.
set -euo pipefail
: "${NETNS_PREFIX:?NETNS_PREFIX is not set: start the nodes with netns_up first}"
while [ "$#" -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done  # ssh-style options, if any were configured
host=${1:?usage: netns_agent.sh HOST COMMAND...}
shift
# ssh hands the remote shell one line made of the words; Open MPI quotes its words for that shell.
# shellcheck disable=SC2016  # $0 and $1 belong to the inner shell
exec nsenter --net="/run/netns/$NETNS_PREFIX-$host" unshare --uts -- sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"
