#!/usr/bin/env bash
# A new user's first commands, timed: a fresh clone of COMMIT with an empty FUSETRAIN_CACHE and pip cache runs
# `make demo`, then `make test`; --second then builds a second clone with the first one's cache (ccache figures).
#
# usage: tools/bench/first_command.sh [--second] COMMIT [WORK]
#   WORK (default /tmp/fusetrain-first-command/COMMIT) holds the clones, the caches and the logs; the times
#   and the compiler cache's statistics are appended to WORK/times. Debian packages already installed are
#   used as they are (say which when recording the figures). Run it with nothing else on the machine.
set -euo pipefail
second=0
if [ "${1:-}" = --second ]; then second=1 && shift; fi
commit=${1:?usage: first_command.sh [--second] COMMIT [WORK]}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-/tmp/fusetrain-first-command/$commit}
export FUSETRAIN_CACHE=$work/cache PIP_CACHE_DIR=$work/pip CCACHE_DIR=$work/cache/ccache

# timed LABEL LOG COMMAND...: runs COMMAND with its output in LOG and appends "LABEL rc=STATUS SECONDS s".
timed() {
  local label=$1 log=$2 start status=0
  shift 2
  start=$(date +%s)
  "$@" > "$log" 2>&1 || status=$?
  echo "$label rc=$status $(($(date +%s) - start)) s" | tee -a "$work/times"
}

clone() {  # clone DIR: a clone of this checkout at COMMIT
  rm -rf "$1" && git clone -q "$root" "$1" && git -C "$1" checkout -q "$commit"
}

if [ "$second" = 1 ]; then
  [ -d "$work/cache" ] || { echo "first_command.sh: no $work/cache: run without --second first" >&2; exit 1; }
  clone "$work/src2"
  ccache -z > /dev/null
  (cd "$work/src2" && timed "second clone make build" "$work/second-build.log" make build)
  ccache -s | tee -a "$work/times"
  exit 0
fi
rm -rf "$work" && mkdir -p "$work"
clone "$work/src"
cd "$work/src"
timed "make demo" "$work/demo.log" make demo
timed "make test" "$work/test.log" make test
grep -E 'tests passed|Total Test time' "$work/test.log" | tee -a "$work/times"
