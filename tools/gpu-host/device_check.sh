#!/usr/bin/env bash
# The first thing run on a GPU host: probes the device, unpacks what tools/gpu-host/bundle.sh packed, runs
# the linkage check, the GPU suite and the GPU speed set under one hard time budget, and leaves at most 8
# files in OUT_DIR (summary.md, logs.tar.xz, junit.xml, speed.md), the summary printed last.
#
# usage: tools/gpu-host/device_check.sh BUNDLE_DIR OUT_DIR                    (from the checkout's root)
#        tools/gpu-host/device_check.sh --recheck REGEX [--rebuild TARGETS] BUNDLE_DIR OUT_DIR
#   --recheck REGEX    unpack, then only the ctest cases matching REGEX (the speed set is not run)
#   --rebuild TARGETS  before that, build these targets ("fusetrain unit_tests") on the host from the
#                      checkout (the bundle's .deb files must include the -dev packages, as fetch-debs.sh's do)
# Environment:
#   BUDGET_S=360   wall seconds for the whole call: with the machine's start, a re-check still fits the window
#   STAGES=...     the stages in order [probe unpack linkage suite speed]; STAGE_LIBRARY=FILE is sourced
#                  first and may define more (stage_NAME functions)
#   JOBS=4         GPU cases run at once;   SEEDS=2   seeds of each side of the fast CIFAR-10 comparison
#   FUSETRAIN_CIFAR10_JPG=FILE  the CIFAR-10 JPEG archive the speed set trains on [BUNDLE_DIR/cifar10-jpg.tar.xz]
# Exit status: 0 every stage passed, 1 a stage failed or was cut off, 3 no CUDA device (nothing checked).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tools/gpu-host/host_env.sh
source "$here/host_env.sh"

deps=${DEVICE_CHECK_DEPS:-/tmp/fusetrain-deps}

# ---- stages: each runs in its own process under the time left, its output in $LOGS/NAME.log; a line
# "figure: TEXT" in it goes into the summary ----

stage_probe() {
  if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L 2> /dev/null | grep -q '^GPU [0-9]'; then
    echo "figure: no CUDA device (nvidia-smi $(command -v nvidia-smi > /dev/null && echo 'lists none' || echo 'not found'))"
    return 3
  fi
  nvidia-smi
  echo "figure: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -n 1)"
  "${FUSETRAIN_PYTHON:-python3}" -c 'import torch; print("figure: torch", torch.__version__, "CUDA", torch.version.cuda, "NCCL",
              ".".join(map(str, torch.cuda.nccl.version())), "devices", torch.cuda.device_count())'
}

# The bundle's libraries and build in place. The bundle names no folder of the machine that made it: its
# ctest files say @FUSETRAIN_SOURCE@ and @FUSETRAIN_BUILD@, which become this checkout and the build here.
stage_unpack() {
  local info=$BUNDLE/bundle.info build
  [ -f "$info" ] || { echo "figure: no $info: make the bundle with tools/gpu-host/bundle.sh"; return 1; }
  grep -qx 'paths=placeholders' "$info" ||
    { echo "figure: $info is from an older bundle.sh (it names the CPU machine's folders): remake the bundle"; return 1; }
  build=$(build_dir)
  echo "figure: bundle of $(sed -n 's/^commit=//p' "$info") made $(sed -n 's/^made_at=//p' "$info")"
  if ls "$BUNDLE"/debs/*.deb > /dev/null 2>&1; then unpack_debs "$BUNDLE/debs" "$deps" || return 1; fi
  mkdir -p "$deps" "$build" && write_env "$deps" || return 1
  tar -xJf "$BUNDLE/bundle.tar.xz" -C "$build" || return 1
  find "$build" -name '*.cmake' -print0 |
    xargs -0 -r sed -i -e "s|@FUSETRAIN_BUILD@|$build|g" -e "s|@FUSETRAIN_SOURCE@|$root|g" || return 1
  # shellcheck source=/dev/null
  . "$deps/env.sh"
  if "$build/bin/fusetrain" info; then return 0; fi
  echo "figure: the bundled fusetrain does not start here: building on the host"
  TESTS=none PREFIX=$deps bash "$here/build.sh" "$BUNDLE/debs" "$build"
}

stage_linkage() {
  in_build ctest -L linkage --output-on-failure
}

# The GPU cases (the label gpu alone, not gpu_suite), several at once; the JUnit file goes to OUT.
stage_suite() {
  local regex=${RECHECK:-}
  if [ -n "$regex" ]; then
    in_build ctest -R "$regex" -j "${JOBS:-4}" --output-on-failure --output-junit "$OUT/junit.xml"
  else
    in_build ctest -L '^gpu$' -j "${JOBS:-4}" --output-on-failure --output-junit "$OUT/junit.xml"
  fi
}

stage_rebuild() {
  TESTS=none TARGETS=$REBUILD PREFIX=$deps bash "$here/build.sh" "$BUNDLE/debs" "$(build_dir)"
}

# The speed set, on one card in this one call: fast CIFAR-10 against its PyTorch port, ResNet-18 bf16
# channels_last batch 512 against eager PyTorch, and the gray and fused conv kernels. Figures to speed.md.
stage_speed() {
  local bin speed=$OUT/speed.md archive=${FUSETRAIN_CIFAR10_JPG:-$BUNDLE/cifar10-jpg.tar.xz}
  bin=$(build_dir)/bin
  {
    echo "# GPU speed set: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1), $(date -u +%Y-%m-%d)"
    echo
    "$bin/fusetrain" bench step --model resnet18 --device cuda --ranks 1 --batch 512 --precision bf16 --channels-last \
      --steps 30 --warmup 10
    "$bin/fusetrain" bench step --model resnet18 --device cuda --ranks 1 --batch 512 --precision bf16 --channels-last \
      --steps 30 --warmup 10 --cuda-graphs
    resnet_pytorch --no-compile
    "$bin/fusetrain" bench kernels
  } > "$speed" 2>&1
  if [ -f "$archive" ]; then
    rm -rf /tmp/fusetrain-cifar && mkdir -p /tmp/fusetrain-cifar && tar -xJf "$archive" -C /tmp/fusetrain-cifar
    "$bin/fusetrain-prep" --format folder --input "$(find /tmp/fusetrain-cifar -maxdepth 2 -type d -name 'train' -printf '%h\n' | head -n 1)" \
      --output /tmp/fusetrain-cifar/data --name cifar10 > /dev/null
    [ -d "$BUNDLE/airbench/airbench" ] && export AIRBENCH=$BUNDLE/airbench  # the public reference, same seeds
    FUSETRAIN_BIN=$bin PYTHON=${FUSETRAIN_PYTHON:-python3} OUT=/tmp/fusetrain-cifar/runs GRAPHS=1 bash "$root/tools/bench/fast_cifar.sh" \
      /tmp/fusetrain-cifar/data "${SEEDS:-2}" >> "$speed" 2>&1
    { profile_fast eager false; profile_fast graphs true; } >> "$speed" 2>&1
  else
    echo "fast CIFAR-10: not run, no $archive" >> "$speed"
  fi
  resnet_pytorch --compile >> "$speed" 2>&1  # last: compiling takes a minute
  cat "$speed"
  grep -E '^threads per rank|^\| 1 \||images_per_s=|time ratio|^trace_summary' "$speed" | sed 's/^/figure: /'
}

# profile_fast LABEL GRAPHS: 10 steps of the fast recipe (epoch 1, after 20) under the operator profiler,
# eager or with CUDA graphs: wall time per step against the GPU's busy time (tools/bench/trace_summary.py).
profile_fast() {
  local dir=/tmp/fusetrain-cifar/profile
  mkdir -p "$dir"
  if "$(build_dir)/bin/fusetrain" train --config "$root/configs/fast/cifar10.yaml" --set data.path=/tmp/fusetrain-cifar/data \
       --set "output.dir=$dir" --set "output.name=fast-$1" --set train.epochs=1 --set "train.cuda_graphs=$2" \
       --set profile.wait=20 --set profile.warmup=3 --set profile.active=10 --set "profile.trace=$dir/$1.json" \
       > "$dir/$1.log" 2>&1; then
    "${FUSETRAIN_PYTHON:-python3}" "$root/tools/bench/trace_summary.py" "$dir/$1.json" --steps 10 --label "fast_$1"
  else
    echo "profile of the fast recipe ($1) failed:"
    tail -n 5 "$dir/$1.log"
  fi
}

# ResNet-18 bf16 channels_last batch 512 in eager (--no-compile) or compiled (--compile) PyTorch.
resnet_pytorch() {
  "${FUSETRAIN_PYTHON:-python3}" "$root/tools/bench/pytorch_baseline.py" --style tuned --synthetic --fixed-batch \
    --model resnet18 --device cuda --batch-size 512 --precision bf16 --channels-last --steps 30 --warmup 10 "$1"
}

# ---- the budget and the summary ----

build_dir() { echo "$root/$(sed -n 's/^build_name=//p' "$BUNDLE/bundle.info")"; }
in_build() { (cd "$(build_dir)" && "$@"); }
now() { date +%s; }

# run_stage NAME: runs stage NAME in its own process with the seconds left, or records why it did not.
run_stage() {
  local name=$1 left start status=0 figures
  left=$((START + BUDGET - $(now) - 5))
  if [ "$left" -lt 10 ]; then
    ROWS+=("| $name | skipped | 0 | only ${left} s of the budget left |")
    FAILED=1
    return 0
  fi
  start=$(now)
  timeout --kill-after=5 "$left" env STAGE_RUN="$name" bash "$0" "${ARGS[@]}" > "$LOGS/$name.log" 2>&1 || status=$?
  figures=$(sed -n 's/^figure: //p' "$LOGS/$name.log" | paste -sd ';' - | sed 's/|/\//g')
  case $status in
    0) ROWS+=("| $name | passed | $(($(now) - start)) | $figures |") ;;
    3) ROWS+=("| $name | no device | $(($(now) - start)) | $figures |"); NO_DEVICE=1 ;;
    124|137) ROWS+=("| $name | cut off at the budget | $(($(now) - start)) | $figures |"); FAILED=1 ;;
    *) ROWS+=("| $name | failed (status $status) | $(($(now) - start)) | $figures $(tail -n 3 "$LOGS/$name.log" | tr '\n|' ' /') |"); FAILED=1 ;;
  esac
}

write_summary() {
  {
    echo "# GPU check, $(date -u '+%Y-%m-%d %H:%M UTC'), host $(hostname)"
    echo
    echo "budget ${BUDGET} s, used $(($(now) - START)) s; mode ${RECHECK:+recheck of $RECHECK}${RECHECK:-full}"
    echo
    echo "| stage | result | seconds | figures |"
    echo "|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
    if [ -f "$OUT/junit.xml" ]; then
      echo
      echo "failed cases: $(grep -o '<testcase name="[^"]*"[^>]*status="fail"' "$OUT/junit.xml" | sed 's/<testcase name="\([^"]*\)".*/\1/' | paste -sd ' ' - || true)"
    fi
  } > "$OUT/summary.md"
  tar -C "$LOGS" -cJf "$OUT/logs.tar.xz" .
  cat "$OUT/summary.md"
}

main() {
  ARGS=("$@")
  RECHECK="" REBUILD=""
  while [ $# -gt 2 ]; do
    case $1 in
      --recheck) RECHECK=$2; shift 2 ;;
      --rebuild) REBUILD=$2; shift 2 ;;
      *) echo "device_check.sh: unknown option $1 (see the header)" >&2; exit 2 ;;
    esac
  done
  [ $# -eq 2 ] || { echo "usage: device_check.sh [--recheck REGEX [--rebuild TARGETS]] BUNDLE_DIR OUT_DIR" >&2; exit 2; }
  BUNDLE=$(cd "$1" && pwd)
  OUT=$(mkdir -p "$2" && cd "$2" && pwd)
  export BUNDLE OUT RECHECK REBUILD
  if [ -n "${STAGE_LIBRARY:-}" ]; then
    # shellcheck source=/dev/null
    source "$STAGE_LIBRARY"
  fi
  if [ -n "${STAGE_RUN:-}" ]; then
    if [ "$STAGE_RUN" != probe ] && [ "$STAGE_RUN" != unpack ] && [ -f "$deps/env.sh" ]; then
      # shellcheck source=/dev/null
      . "$deps/env.sh"
    fi
    "stage_$STAGE_RUN"
    return
  fi
  START=$(now) BUDGET=${BUDGET_S:-360} FAILED=0 NO_DEVICE=0 ROWS=()
  LOGS=$(mktemp -d)
  local stages=${STAGES:-probe unpack linkage suite speed} name
  [ -z "$RECHECK" ] || stages="unpack ${REBUILD:+rebuild }suite"
  for name in $stages; do
    run_stage "$name"
    [ "$NO_DEVICE" = 0 ] || break
  done
  write_summary
  rm -rf "$LOGS"
  [ "$NO_DEVICE" = 0 ] || exit 3
  exit "$FAILED"
}

main "$@"
