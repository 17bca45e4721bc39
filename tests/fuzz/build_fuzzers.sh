#!/usr/bin/env bash
# ctest fixture of the fuzz tests: configures and builds tests/fuzz/project with clang++ (libFuzzer, ASan,
# UBSan) in its own build folder; incremental, so later runs only relink what changed.
set -euo pipefail
project=${1:?usage: build_fuzzers.sh PROJECT_DIR BUILD_DIR CLANGXX}
build=${2:?}
clangxx=${3:?}
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$project" -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER="$clangxx"
fi
cmake --build "$build" -j "$(nproc)"
