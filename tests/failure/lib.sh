# Helpers sourced by the failure scripts: run one case under a deadline, then assert on its exit status,
# elapsed time and output. Every assertion names the case, and a failed one prints the case's output.
# shellcheck shell=bash
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}"
FUSETRAIN_MPIRUN=${FUSETRAIN_MPIRUN:-mpirun --oversubscribe --allow-run-as-root --bind-to none}
# shellcheck disable=SC2034  # FT is used by the scripts that source this file
FT=$FUSETRAIN_BIN/fusetrain
WORK=$FUSETRAIN_TMP
CASE=setup
OUT=/dev/null
STATUS=0
ELAPSED=0

FAILED=()

# check COMMAND...: runs one case in a subshell, so that a failed case is reported and the next one still runs.
check() {
  if ! ( "$@" ); then FAILED+=("$*"); fi
}

# finish TITLE: the script's verdict over every case checked.
finish() {
  if [ ${#FAILED[@]} -gt 0 ]; then
    echo "FAIL: $1: ${#FAILED[@]} case(s) failed:" >&2
    printf '  %s\n' "${FAILED[@]}" >&2
    exit 1
  fi
  echo "PASS: $1"
}

ft_fail() {
  echo "FAIL [$CASE]: $*" >&2
  if [ -s "$OUT" ]; then sed 's/^/    | /' "$OUT" | tail -n 40 >&2; fi
  exit 1
}

now() { date +%s.%N; }
seconds_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

FASHION_MNIST=/usr/share/datasets/fashion-mnist
rm -rf "$WORK" && mkdir -p "$WORK"

# prep_data DIR [LIMIT]: real Fashion-MNIST (LIMIT train and LIMIT test images, default 600) as 3+3 shards;
# the script is skipped (77) on hosts without Debian's dataset-fashion-mnist (GPU hosts, for example). The
# shards are prepared once per build tree, limit and fusetrain-prep binary, under a lock by the first case
# that asks (beside the cases' folders), and copied into DIR, which the case may then damage as it likes.
prep_data() {
  if [ ! -f "$FASHION_MNIST/train-images-idx3-ubyte.gz" ]; then
    echo "SKIP: dataset-fashion-mnist not installed ($FASHION_MNIST)"
    exit 77
  fi
  local prep=$FUSETRAIN_BIN/fusetrain-prep shared
  shared=$(dirname "$FUSETRAIN_TMP")/shared-fashion-mnist-${2:-600}
  mkdir -p "$(dirname "$shared")"
  (
    flock 9
    identity="$prep $(stat -c '%s %Y' "$prep")"
    [ "$(cat "$shared.made-by" 2> /dev/null)" != "$identity" ] || exit 0
    rm -rf "$shared" "$shared.made-by"
    "$prep" --format idx --input "$FASHION_MNIST" --output "$shared" --shards 3 --limit "${2:-600}" > /dev/null &&
      echo "$identity" > "$shared.made-by"
  ) 9> "$shared.lock" || ft_fail "fusetrain-prep failed"
  mkdir -p "$1" && cp -r "$shared"/. "$1"/ || ft_fail "could not copy the shared shards $shared into $1"
}

# The rank's process id of a running job, found by its command line and OMPI_COMM_WORLD_RANK. Retries for
# up to 5 s (a loaded machine), and on failure says which processes matched. grep reads the whole
# environment: with -q it could exit early, and under pipefail tr's SIGPIPE would fail the test.
rank_pid() {
  local pattern=$1 rank=$2 p
  for _ in $(seq 1 50); do
    for p in $(pgrep -f -- "$pattern" || true); do
      if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -x "OMPI_COMM_WORLD_RANK=$rank" > /dev/null; then
        echo "$p"
        return 0
      fi
    done
    sleep 0.1
  done
  echo "rank_pid: no process of rank $rank among those matching '$pattern':" >&2
  pgrep -af -- "$pattern" >&2 || echo "  (none)" >&2
  return 1
}

# wait_for_line FILE REGEX SECONDS PID: waits until FILE has a matching line; fails if PID ends first.
wait_for_line() {
  local file=$1 regex=$2 limit=$3 pid=$4
  for _ in $(seq 1 $((limit * 10))); do
    if grep -Eq -- "$regex" "$file" 2>/dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || { OUT=$file; ft_fail "the job ended before printing /$regex/"; }
    sleep 0.1
  done
  OUT=$file
  ft_fail "no line /$regex/ within $limit s"
}

# write_config FILE DATA_DIR [YAML lines...]: a small valid CPU run on DATA_DIR writing to $WORK/runs; a given
# line replaces the default line of its section (e.g. "train: {epochs: 5, device: cpu}"). The default runs on
# the CPU, and the failure and e2e suites name device: cpu in every train line they give, so that a GPU host
# runs them as written (the GPU suite gives device: cuda).
write_config() {
  local file=$1 data=$2 line section given replaced
  shift 2
  local defaults=("model: {name: simple_cnn}" "data: {path: $data, batch_size: 32}"
                  "train: {epochs: 2, threads: 1, seed: 7, device: cpu}"
                  "distributed: {backend: mpi, stall_timeout_s: 10}" "output: {dir: $WORK/runs, name: case}")
  : > "$file"
  for line in "${defaults[@]}"; do
    section=${line%%:*}
    replaced=no
    for given in "$@"; do
      if [ "${given%%:*}" = "$section" ]; then replaced=yes; fi
    done
    if [ "$replaced" = no ]; then echo "$line" >> "$file"; fi
  done
  for line in "$@"; do echo "$line" >> "$file"; done
}

# run_case NAME SECONDS COMMAND...: runs COMMAND with its output in $WORK/NAME.log and sets STATUS and
# ELAPSED; fails the test when it is still running after SECONDS (a hang).
run_case() {
  CASE=$1
  local limit=$2
  shift 2
  OUT=$WORK/$CASE.log
  local start
  start=$(now)
  set +e
  timeout --kill-after=5 "$limit" "$@" > "$OUT" 2>&1 < /dev/null
  STATUS=$?
  set -e
  ELAPSED=$(seconds_since "$start")
  if [ "$STATUS" -eq 124 ] || [ "$STATUS" -eq 137 ]; then ft_fail "still running after $limit s: a hang"; fi
}

# launch NAME COMMAND...: starts a job in the background, output in $WORK/NAME.log; sets JOB, CASE and OUT.
# The job and everything it started are killed when the (sub)shell that launched it exits.
launch() {
  CASE=$1
  OUT=$WORK/$1.log
  shift
  "$@" > "$OUT" 2>&1 < /dev/null &
  JOB=$!
  JOBS_STARTED+=("$JOB")
  trap cleanup_jobs EXIT  # subshells of check() do not inherit the script's trap
}
JOBS_STARTED=()

# The process ids of PID and all its descendants, parents first.
process_tree() {
  local child
  echo "$1"
  for child in $(pgrep -P "$1" || true); do process_tree "$child"; done
}

kill_tree() {
  local pid
  for pid in $(process_tree "$1"); do kill -CONT "$pid" 2> /dev/null || true; kill -KILL "$pid" 2> /dev/null || true; done
}

cleanup_jobs() {
  local job
  for job in "${JOBS_STARTED[@]}"; do kill_tree "$job"; done
}
trap cleanup_jobs EXIT

# wait_job SECONDS: waits for JOB to end and sets STATUS; a job still running after SECONDS is a hang.
wait_job() {
  for _ in $(seq 1 $(($1 * 10))); do
    kill -0 "$JOB" 2> /dev/null || break
    sleep 0.1
  done
  if kill -0 "$JOB" 2> /dev/null; then
    kill_tree "$JOB"
    ft_fail "still running $1 s later: a hang"
  fi
  set +e
  wait "$JOB"
  STATUS=$?
  set -e
}

expect_status() { [ "$STATUS" -eq "$1" ] || ft_fail "exit status $STATUS, expected $1"; }
expect_failure() {
  [ "$STATUS" -ne 0 ] || ft_fail "exit status 0, expected a failure"
  [ "$STATUS" -lt 128 ] || ft_fail "exit status $STATUS: killed by signal $((STATUS - 128)) instead of an error exit"
}
expect_message() { grep -Eq -- "$1" "$OUT" || ft_fail "no output line matches /$1/"; }
expect_no_message() { if grep -Eq -- "$1" "$OUT"; then ft_fail "output matches /$1/ but must not"; fi; }
expect_count() {
  local n
  n=$(grep -Ec -- "$2" "$OUT" || true)
  [ "$n" -eq "$1" ] || ft_fail "/$2/ appears $n times, expected $1"
}
expect_faster_than() {
  awk -v e="$ELAPSED" -v l="$1" 'BEGIN { exit !(e <= l) }' || ft_fail "took $ELAPSED s, expected at most $1 s"
}
# expect_no_rank CONFIG: no process of the job started with --config CONFIG is left running.
expect_no_rank() { if pgrep -f -- "--config $1" > /dev/null; then ft_fail "a rank is still running"; fi; }
expect_absent() { if [ -e "$1" ]; then ft_fail "$1 exists but must not"; fi; }
# No temporary or half-written output left in a folder (AtomicFile temporaries end in .partial-<pid>).
expect_no_partial() {
  local left
  left=$(find "$1" -name '*.partial-*' 2>/dev/null || true)
  [ -z "$left" ] || ft_fail "half-written files left behind: $left"
}
# flip_byte FILE: the byte in the middle of FILE, inverted in place.
flip_byte() {
  local offset value
  offset=$(($(stat -c %s "$1") / 2))
  value=$(od -An -tu1 -j "$offset" -N1 "$1" | tr -d ' ')
  # shellcheck disable=SC2059
  printf "\\$(printf '%03o' $((value ^ 255)))" | dd of="$1" bs=1 seek="$offset" count=1 conv=notrunc 2> /dev/null
  [ "$(od -An -tu1 -j "$offset" -N1 "$1" | tr -d ' ')" -ne "$value" ] || ft_fail "the byte of $1 did not change"
}

pass() {
  local line
  line=$(grep -E -m1 'error:' "$OUT" || grep -E -m1 'warning|resuming|stopped|noticed' "$OUT" || true)
  echo "PASS [$CASE] exit $STATUS in $ELAPSED s: $line"
}
