#!/usr/bin/env bash
# Lint: src/ and kernels/ make no blocking CUDA call (stream, event or device synchronisation, blocking copy)
# except through kernels/host_sync.h, whose wrappers show each to the host-sync check; a raw one passes unseen.
# usage: raw_cuda_sync.sh SOURCE_DIR
set -euo pipefail
root=${1:?usage: raw_cuda_sync.sh SOURCE_DIR}
pattern='\bcuda(StreamSynchronize|EventSynchronize|DeviceSynchronize|ThreadSynchronize|Memcpy(2D|3D|Peer|ToSymbol|FromSymbol)?)[[:space:]]*\('

# raw_calls DIR...: each raw call outside the wrapper as FILE:LINE: TEXT (comment lines left out).
raw_calls() {
  grep -rnE --include='*.cpp' --include='*.h' --include='*.cu' --include='*.cuh' "$pattern" "$@" |
    grep -v '/kernels/host_sync\.h:' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' || true
}

# The pattern itself, on a planted file: one raw call found; its comment and the asynchronous copy not.
self_check() {
  local dir found
  dir=$(mktemp -d)
  mkdir -p "$dir/kernels"
  printf '%s\n' '// cudaMemcpy(dst, src, n, kind) waits' 'FT_CHECK_CUDA(cudaMemcpyAsync(a, b, n, k, s));' \
    '  FT_CHECK_CUDA(cudaMemcpy (a, b, n, k));' > "$dir/kernels/planted.cu"
  found=$(raw_calls "$dir/kernels" | wc -l)
  rm -rf "$dir"
  [ "$found" -eq 1 ] || { echo "FAIL: the lint finds $found raw calls in its planted file, not 1" >&2; exit 1; }
}

self_check
calls=$(raw_calls "$root/src" "$root/kernels")
if [ -n "$calls" ]; then
  echo "FAIL: blocking CUDA calls outside kernels/host_sync.h (use sync_stream, sync_event, sync_device or" \
    "copy_blocking, which the host-sync check sees):" >&2
  echo "$calls" >&2
  exit 1
fi
echo "PASS: no raw blocking CUDA call in $root/src or $root/kernels"
