#!/usr/bin/env bash
# The GPU host's tools, checked on any host through every path that needs no CUDA device to run: the
# bundle names no folder of this machine (placeholders in its ctest files), is kept while the build is
# unchanged, and unpacks into another checkout; the check answers "no device" with exit 3; a stage that
# outlives the budget is cut off and the next is not started; a call cut off in the middle of its GPU cases
# (by its budget, or killed outright) still leaves a summary of every case that finished; a failing speed
# row is recorded and the next one runs; a re-check runs only the named cases; cases with RUN_SERIAL run
# alone after the others, and the hosts tier's cases one at a time in its mode; and no call leaves more
# than 8 files in its output folder.
# usage: host_tools_check.sh (FUSETRAIN_BIN, FUSETRAIN_SOURCE, FUSETRAIN_TMP, FUSETRAIN_PYTHON as for the suite)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/failure/lib.sh
source "$here/../failure/lib.sh"
: "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_PYTHON:?}"
build=$(cd "$FUSETRAIN_BIN/.." && pwd)
tools=$FUSETRAIN_SOURCE/tools/gpu-host
# A checkout of the GPU host's own: the check unpacks the bundle into <its root>/<build name>.
checkout=$WORK/checkout
mkdir -p "$checkout/tools"
cp -r "$tools" "$checkout/tools/gpu-host"
cp -r "$FUSETRAIN_SOURCE/tests" "$checkout/tests"
mkdir -p "$WORK/no-nvidia-smi"
printf '#!/bin/sh\nexit 9\n' > "$WORK/no-nvidia-smi/nvidia-smi"
chmod +x "$WORK/no-nvidia-smi/nvidia-smi"
bundle=$(cd "$WORK/.." && pwd)/host-tools-bundle  # beside the test's folder: kept while the build is unchanged
mkdir -p "$bundle"  # an empty one where this build has no CUDA to bundle
check_env=(env PATH="$WORK/no-nvidia-smi:$PATH" DEVICE_CHECK_DEPS="$WORK/deps" FUSETRAIN_PYTHON="$FUSETRAIN_PYTHON")

# at_most_eight OUT: what comes back from a GPU host is at most 8 files.
at_most_eight() {
  local n
  n=$(find "$1" -type f | wc -l)
  [ "$n" -le 8 ] || ft_fail "$1 holds $n files; a device call brings back at most 8"
}

bundle_made() {
  if ! "$FUSETRAIN_BIN/fusetrain" info 2> /dev/null | grep -q '^CUDA kernels: built'; then
    echo "PASS [bundle_made]: not checked, this build has no CUDA kernels to bundle"
    return 0
  fi
  run_case bundle_made 600 env BUILD="$build" DEBS=none LIMIT_MIB=44 bash "$tools/bundle.sh" "$bundle"
  expect_status 0
  expect_message "^bundle\.sh: $bundle holds [0-9]+ MiB: bundle\.tar\.xz [0-9]+ MiB"
  grep -qx "build_name=$(basename "$build")" "$bundle/bundle.info" || ft_fail "bundle.info does not name the build"
  grep -qx "paths=placeholders" "$bundle/bundle.info" || ft_fail "bundle.info does not say its paths are placeholders"
  if grep -qF -e "$build" -e "$FUSETRAIN_SOURCE" "$bundle/bundle.info"; then ft_fail "bundle.info names this machine's folders"; fi
  tar -xJOf "$bundle/bundle.tar.xz" ./tests/gpu/CTestTestfile.cmake > "$WORK/packed_ctest.cmake"
  grep -q '@FUSETRAIN_SOURCE@/tests/gpu/gpu_cases.sh' "$WORK/packed_ctest.cmake" ||
    ft_fail "the packed ctest file has no placeholders"
  if grep -qF -e "$build" -e "$FUSETRAIN_SOURCE" "$WORK/packed_ctest.cmake"; then
    ft_fail "the packed ctest file names this machine's folders"
  fi
  tar -tJf "$bundle/bundle.tar.xz" > "$WORK/bundle.list"  # read whole: grep -q would cut tar off (pipefail)
  grep -qx './bin/fusetrain' "$WORK/bundle.list" || ft_fail "the bundle lacks bin/fusetrain"
  grep -q 'tests/unit/unit_tests$' "$WORK/bundle.list" || ft_fail "the bundle lacks the unit tests"
  grep -q 'engine_threads_tsan$' "$WORK/bundle.list" && ft_fail "the bundle carries the ThreadSanitizer build"
  if "$FUSETRAIN_PYTHON" -c 'import importlib.util as u; assert u.find_spec("airbench")' 2> /dev/null; then
    [ -f "$bundle/airbench/airbench/lib_airbench94.py" ] || ft_fail "the bundle lacks airbench's source"
  fi
  pass
  run_case bundle_kept 60 env BUILD="$build" DEBS=none bash "$tools/bundle.sh" "$bundle"
  expect_status 0
  expect_message "^bundle\.sh: $bundle/bundle\.tar\.xz is already this build's: kept$"
  pass
  # Unpacked into the other checkout: its programs start and ctest there finds the GPU cases, run from it.
  run_case unpacked 300 "${check_env[@]}" STAGES=unpack bash "$checkout/tools/gpu-host/device_check.sh" \
    "$bundle" "$WORK/out_unpack"
  expect_status 0
  local unpacked
  unpacked=$checkout/$(basename "$build")
  "$unpacked/bin/fusetrain" --version > /dev/null || ft_fail "the unpacked fusetrain does not start"
  grep -q -- "$checkout/tests/gpu/gpu_cases.sh" "$unpacked/tests/gpu/CTestTestfile.cmake" ||
    ft_fail "ctest's files do not name the checkout's scripts"
  if grep -q -- "$FUSETRAIN_SOURCE/tests/gpu/gpu_cases.sh" "$unpacked/tests/gpu/CTestTestfile.cmake"; then
    ft_fail "ctest's files still name $FUSETRAIN_SOURCE's scripts"
  fi
  (cd "$unpacked" && ctest -N -L '^gpu$') > "$WORK/ctest.list"
  grep -q 'gpu\.train_fp32' "$WORK/ctest.list" || ft_fail "ctest in the unpacked tree lists no GPU case"
  at_most_eight "$WORK/out_unpack"
  pass
  # A re-check runs the named cases only: here they skip, no device being visible.
  run_case recheck 300 "${check_env[@]}" bash "$checkout/tools/gpu-host/device_check.sh" --recheck 'gpu\.train_fp32$' \
    "$bundle" "$WORK/out_recheck"
  expect_status 0
  expect_message "^\| unpack \| passed \|"
  expect_message "^\| cases \| passed \|"
  expect_message "^\| gpu\.train_fp32 \| skipped: SKIP: no CUDA device visible"
  expect_no_message "^\| gpu\.train_bf16 "
  at_most_eight "$WORK/out_recheck"
  pass
}
check bundle_made

no_device() {
  run_case no_device 120 "${check_env[@]}" bash "$checkout/tools/gpu-host/device_check.sh" "$bundle" "$WORK/out_none"
  expect_status 3
  expect_message "^\| probe \| no device \| [0-9]+ \| no CUDA device \(nvidia-smi lists none\) \|$"
  expect_no_message "^\| unpack "
  if [ ! -s "$WORK/out_none/summary.md" ] || [ ! -s "$WORK/out_none/logs.tar.xz" ]; then ft_fail "no summary or logs"; fi
  tail -n 1 "$OUT" | grep -q '^| probe ' || ft_fail "the summary is not what the check printed last"
  at_most_eight "$WORK/out_none"
  pass
}
check no_device

# A stand-in stage that sleeps past a 20 s budget: cut off in time (5 s before the budget's end), and the stage
# after it not started. (A unit starts only with 15 s of the budget left: 20 leaves the call's start 5 s, where a
# 15 s budget failed whenever a second ticked before the first stage.)
budget_cut_off() {
  printf 'stage_sleepy() { echo "figure: asleep"; sleep 120; }\n' > "$WORK/stages.sh"
  run_case budget_cut_off 60 "${check_env[@]}" STAGE_LIBRARY="$WORK/stages.sh" STAGES="sleepy linkage" BUDGET_S=20 \
    bash "$checkout/tools/gpu-host/device_check.sh" "$bundle" "$WORK/out_budget"
  expect_status 1
  expect_message "^\| sleepy \| cut off at the budget \| 1[0-9] \| asleep \|$"
  expect_message "^\| linkage \| not started \| 0 \| only -?[0-9]+ s of the budget left \|$"
  expect_faster_than 30
  at_most_eight "$WORK/out_budget"
  pass
}
check budget_cut_off

# Stand-in GPU cases (what each does is in its name) and speed rows, for the cuts in the middle of tier 1.
cat > "$WORK/standins.sh" <<'STANDINS'
run_gpu_case() {
  case $1 in
    *quick_pass) echo "figure: $1 done"; sleep 1 ;;
    *quick_fail) sleep 2; echo "FAIL [planted]: a case that fails"; return 1 ;;
    *) sleep 300 ;;
  esac
}
row_ok() { echo "figure: row ok"; }
row_fail() { echo "a row that fails"; return 1; }
row_after() { echo "figure: the row after"; }
STANDINS
tier1=(STAGE_LIBRARY="$WORK/standins.sh" STAGES="cases speed" JOBS=3
       CASES="gpu.quick_pass gpu.quick_fail gpu.slow_a gpu.slow_b")

# The budget ends in the middle of the cases: those that finished keep their rows, those running are cut
# off, and the speed stage is not started.
tier1_budget_cut() {
  run_case tier1_budget_cut 60 "${check_env[@]}" "${tier1[@]}" BUDGET_S=20 \
    bash "$checkout/tools/gpu-host/device_check.sh" "$bundle" "$WORK/out_tier1"
  expect_status 1
  expect_message "^\| gpu\.quick_pass \| passed \| [0-9]+ \| gpu\.quick_pass done \|$"
  expect_message "^\| gpu\.quick_fail \| failed \(status 1\): FAIL \[planted\]: a case that fails \| [0-9]+ \|"
  expect_message "^\| gpu\.slow_a \| cut off at the budget \| 1[0-9] \|"
  expect_message "^\| gpu\.slow_b \| cut off at the budget \| 1[0-9] \|"
  expect_message "^\| cases \| cut off at the budget \| 1[0-9] \|"
  expect_message "^\| speed \| not started \| 0 \|"
  expect_faster_than 30
  at_most_eight "$WORK/out_tier1"
  pass
}
check tier1_budget_cut

# The whole call killed outright (the device tool's own limit) while cases run: summary.md, rewritten as
# each case ended, already holds the finished ones and names those still running.
tier1_killed() {
  local summary=$WORK/out_killed/summary.md
  launch tier1_killed "${check_env[@]}" "${tier1[@]}" BUDGET_S=200 \
    bash "$checkout/tools/gpu-host/device_check.sh" "$bundle" "$WORK/out_killed"
  wait_for_line "$summary" '^\| gpu\.quick_fail \| failed' 20 "$JOB"
  kill_tree "$JOB"
  OUT=$summary
  expect_message "^\| gpu\.quick_pass \| passed \| [0-9]+ \| gpu\.quick_pass done \|$"
  expect_message "^budget 200 s, used [0-9]+ s; running: .*case:gpu\.slow_a"
  [ -s "$WORK/out_killed/logs.tar.xz" ] || ft_fail "no logs came back"
  at_most_eight "$WORK/out_killed"
  pass
}
check tier1_killed

# A failing speed row is recorded and the rows after it still run; speed.md holds each row's output.
speed_rows() {
  run_case speed_rows 60 "${check_env[@]}" STAGE_LIBRARY="$WORK/standins.sh" STAGES=speed ROWS="ok fail after" \
    bash "$checkout/tools/gpu-host/device_check.sh" "$bundle" "$WORK/out_rows"
  expect_status 1
  expect_message "^\| ok \| passed \| [0-9]+ \| row ok \|$"
  expect_message "^\| fail \| failed \(status 1\): a row that fails \|"
  expect_message "^\| after \| passed \| [0-9]+ \| the row after \|$"
  grep -q '^figure: the row after$' "$WORK/out_rows/speed.md" || ft_fail "speed.md lacks the last row's output"
  at_most_eight "$WORK/out_rows"
  pass
}
check speed_rows

# fast_pick: the model.pool_norm_gelu whose every seed ran and reached the floor (93.5% exactly counts) with the
# lowest mean training time, written for the comparison rows after it, which take SET instead where given; none
# such: the row fails and no pick is left. Stand-in runs give each label and seed an accuracy and a time.
cat > "$WORK/pick_standins.sh" <<'PICK'
fast_run() {
  local acc train
  read -r _ _ acc train < <(tr ';' '\n' <<< "$PICK_FIGURES" | grep "^$1 $2 ") || return 1
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$acc" "$train" >> "$fast/runs.tsv"
  echo "figure: $1-s$2 acc $acc%, train $train s"
}
row_show_set() { echo "figure: set [$(comparison_set)]"; }
PICK
fast_pick_row() {
  local n=0 figures want
  pick_case() {  # PICK_FIGURES, the status and pick wanted, then env settings
    figures=$1 want=$3
    n=$((n + 1))
    run_case "fast_pick_$n" 60 "${check_env[@]}" STAGE_LIBRARY="$WORK/pick_standins.sh" STAGES=speed \
      ROWS="fast_pick show_set" FAST_DIR="$WORK/fast_pick" PICK_FIGURES="$figures" "${@:4}" \
      bash "$checkout/tools/gpu-host/device_check.sh" "$bundle" "$WORK/out_pick_$n"
    expect_status "$2"
    expect_message "^\| show_set \| passed \| [0-9]+ \| set \[$want\] \|$"
  }
  pick_case "pick-aten 0 94.1 1.94;pick-pool 0 94.0 1.50;pick-aten 1 94.0 1.95;pick-pool 1 93.5 1.51" 0 \
    "model.pool_norm_gelu=pool"
  expect_message "picked model.pool_norm_gelu=pool"
  grep -qx "model.pool_norm_gelu=pool" "$WORK/fast_pick/pick.set" || ft_fail "pick.set does not hold the pick"
  pick_case "pick-aten 0 94.1 1.94;pick-pool 0 94.0 1.50;pick-aten 1 94.0 1.95;pick-pool 1 93.49 1.51" 0 \
    "model.pool_norm_gelu=aten"
  pick_case "pick-aten 0 94.1 1.94;pick-pool 0 94.0 1.50;pick-aten 1 94.0 1.95" 1 "model.pool_norm_gelu=aten"
  expect_message "^\| fast_pick \| failed \(status 1\)"
  pick_case "pick-aten 0 93.0 1.94;pick-pool 0 94.0 1.50;pick-aten 1 94.0 1.95;pick-pool 1 93.4 1.51" 1 ""
  expect_message "no model.pool_norm_gelu of 'aten pool' ran and reached 93.5% on every seed"
  [ ! -e "$WORK/fast_pick/pick.set" ] || ft_fail "a failed pick left pick.set"
  pick_case "pick-aten 0 94.1 1.94;pick-pool 0 94.0 1.50" 0 "precision.dtype=bf16" PICK_SEEDS=1 \
    SET="precision.dtype=bf16"
  expect_message "picked model.pool_norm_gelu=pool"
  pass
}
check fast_pick_row

# Stand-in cases that record when they ran (seconds since the epoch, to the millisecond) and whether the
# several-NCCL-hosts mode was on; serial_cases stands in for ctest's RUN_SERIAL property.
cat > "$WORK/timed.sh" <<'TIMED'
run_gpu_case() {
  local start
  start=$(date +%s.%N)
  sleep 2
  echo "$1 $start $(date +%s.%N) hosts=${FUSETRAIN_GPU_NCCL_HOSTS:-off}" >> "$TIMED_LOG"
  echo "figure: $1 ran"
}
serial_cases() { printf 'gpu.serial_a\ngpu.serial_b\n'; }
TIMED

# overlaps LOG A B: whether the runs of cases A and B in LOG overlap in time.
overlaps() {
  awk -v a="$2" -v b="$3" '$1 == a { s1 = $2; e1 = $3 } $1 == b { s2 = $2; e2 = $3 }
                           END { exit !(s1 < e2 && s2 < e1) }' "$1"
}

# RUN_SERIAL holds across the separate ctest processes: the other cases run 3 at a time, each serial case
# after them and alone; every case passes.
serial_cases_alone() {
  local log=$WORK/serial.log case other
  : > "$log"
  run_case serial_cases_alone 60 "${check_env[@]}" TIMED_LOG="$log" STAGE_LIBRARY="$WORK/timed.sh" STAGES=cases \
    JOBS=3 CASES="gpu.serial_a gpu.par_a gpu.par_b gpu.serial_b gpu.par_c" \
    bash "$checkout/tools/gpu-host/device_check.sh" "$bundle" "$WORK/out_serial"
  expect_status 0
  [ "$(wc -l < "$log")" -eq 5 ] || { OUT=$log; ft_fail "not every case ran once"; }
  overlaps "$log" gpu.par_a gpu.par_c || { OUT=$log; ft_fail "the other cases did not run side by side"; }
  for case in gpu.serial_a gpu.serial_b; do
    expect_message "^\| $case \| passed \| [0-9]+ \| $case ran \|$"
    for other in gpu.serial_a gpu.serial_b gpu.par_a gpu.par_b gpu.par_c; do
      [ "$other" = "$case" ] || ! overlaps "$log" "$case" "$other" || { OUT=$log; ft_fail "$case ran beside $other"; }
    done
  done
  pass
}
check serial_cases_alone

# The hosts tier's stage: its cases one at a time, each with the several-NCCL-hosts mode on.
nccl_hosts_stage() {
  local log=$WORK/hosts.log
  : > "$log"
  run_case nccl_hosts_stage 60 "${check_env[@]}" TIMED_LOG="$log" STAGE_LIBRARY="$WORK/timed.sh" STAGES=nccl_hosts \
    CASES="gpu.hosts_a gpu.hosts_b gpu.hosts_c" bash "$checkout/tools/gpu-host/device_check.sh" --tier hosts \
    "$bundle" "$WORK/out_hosts"
  expect_status 0
  expect_message "^# GPU check: tier hosts, "
  expect_message "^\| nccl_hosts \| passed \|"
  [ "$(grep -c ' hosts=1$' "$log")" -eq 3 ] || { OUT=$log; ft_fail "not every case ran once in the several-NCCL-hosts mode"; }
  if overlaps "$log" gpu.hosts_a gpu.hosts_b || overlaps "$log" gpu.hosts_b gpu.hosts_c; then
    OUT=$log
    ft_fail "the stage's cases ran side by side"
  fi
  pass
}
check nccl_hosts_stage

# CASE_LIMIT_S bounds each case of the stage: one that hangs is stopped at its limit, not at the budget's, and
# the case after it still runs.
nccl_hosts_case_limit() {
  printf '%s\n' 'run_gpu_case() { case $1 in *stuck) sleep 300 ;; *) echo "figure: $1 ran" ;; esac; }' \
    > "$WORK/stuck.sh"
  run_case nccl_hosts_case_limit 60 "${check_env[@]}" STAGE_LIBRARY="$WORK/stuck.sh" STAGES=nccl_hosts BUDGET_S=50 \
    CASE_LIMIT_S=12 CASES="gpu.hosts_stuck gpu.hosts_after" bash "$checkout/tools/gpu-host/device_check.sh" \
    --tier hosts "$bundle" "$WORK/out_limit"
  expect_status 1
  expect_message "^\| gpu\.hosts_stuck \| timed out after 12 s \| 1[2-8] \|"
  expect_message "^\| gpu\.hosts_after \| passed \| [0-9]+ \| gpu\.hosts_after ran \|$"
  pass
}
check nccl_hosts_case_limit
finish "the GPU host's tools work wherever no device is needed"
