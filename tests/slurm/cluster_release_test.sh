#!/usr/bin/env bash
# cluster_release of local_cluster.sh against a scripted Slurm client: it releases a requeued job that waits
# pending, returns at once when Slurm already started the job again (or it ended), and fails after 60 polls.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=local_cluster.sh
source "$here/local_cluster.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

sleep() { :; }  # the scripted client answers at once; polls need not wait

# scripted: a client whose `scontrol show job` prints the next line of $work/states (the last one repeats)
# and whose `scontrol update` is logged to $work/updates, failing when $work/update_fails exists.
scripted() {
  case "$1 $2" in
    "scontrol show")
      local n; n=$(cat "$work/polls"); echo $((n + 1)) > "$work/polls"
      sed -n "$((n + 1))p" "$work/states" | grep . || tail -n 1 "$work/states" ;;
    "scontrol update") echo "${*:3}" >> "$work/updates"; [ ! -e "$work/update_fails" ] ;;
    *) echo "unexpected client call: $*" >&2; return 2 ;;
  esac
}
cluster_client=(scripted)

# case NAME STATUS UPDATES STATE...: cluster_release 7 must exit STATUS and call update UPDATES times.
case_() {
  local name=$1 want=$2 updates=$3 status=0 got
  shift 3
  printf '%s\n' "$@" > "$work/states"; echo 0 > "$work/polls"; : > "$work/updates"
  cluster_release 7 > "$work/out" 2>&1 || status=$?
  got=$(wc -l < "$work/updates")
  if [ "$status" -ne "$want" ] || [ "$got" -ne "$updates" ]; then
    echo "FAIL [$name]: exit $status (want $want), $got update(s) (want $updates)"; cat "$work/out"; exit 1
  fi
  echo "PASS [$name] after $(cat "$work/polls") poll(s): $(head -n 1 "$work/out")"
}

run="JobId=7 JobState=RUNNING Restarts=0"
case_ pending_is_released 0 1 "$run" "JobId=7 JobState=REQUEUED Restarts=1" "JobId=7 JobState=PENDING Restarts=1"
grep -q "JobId=7 StartTime=now+3" "$work/updates" || { echo "FAIL: the release does not set StartTime=now+3"; exit 1; }
# Slurm requeued the job itself after a node failure and started it at once: nothing to release.
case_ started_again 0 0 "$run" "JobId=7 JobState=COMPLETING Restarts=1" "JobId=7 JobState=RUNNING Restarts=1"
case_ already_ended 0 0 "JobId=7 JobState=COMPLETED Restarts=1"
# Pending when polled, started before the update: the update fails, the next poll sees it running.
touch "$work/update_fails"
case_ started_during_update 0 1 "JobId=7 JobState=PENDING Restarts=1" "JobId=7 JobState=RUNNING Restarts=1"
rm "$work/update_fails"
case_ never_requeued 1 0 "$run"
grep -q "neither pending nor started again within 60 s" "$work/out" || { echo "FAIL: no reason given"; exit 1; }
echo "PASS"
