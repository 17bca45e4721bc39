#!/usr/bin/env bash
# Fails when a built binary that loads LibTorch needs a std::filesystem symbol that LibTorch also
# exports: the pip LibTorch carries its own, statically linked copy, which crashes when bound.
# usage: libtorch_symbols.sh BINARY...
#
# Two checks per binary: (1) static: its undefined dynamic symbols against the std::filesystem symbols
# that both LibTorch's libraries and libstdc++ define; (2) at run time: with every symbol bound at
# start-up (LD_BIND_NOW), the dynamic linker's own log (LD_DEBUG=bindings) must show no binding of a
# std::filesystem symbol into LibTorch. (LibTorch also exports inline template instances of
# std::string and the like; those are the same code as libstdc++'s and bind harmlessly.)
set -euo pipefail

fail=0
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

fs_symbols() { nm -D --defined-only "$@" 2>/dev/null | awk '{print $3}' | sed 's/@.*//' | grep 'St10filesystem' | sort -u; }

for binary in "$@"; do
  clean=yes
  [ -x "$binary" ] || { echo "FAIL: $binary is not a built executable"; fail=1; continue; }
  mapfile -t torch_libs < <(ldd "$binary" | awk '$3 ~ /lib(torch|c10)[^/]*\.so/ {print $3}')
  if [ ${#torch_libs[@]} -eq 0 ]; then
    echo "skip: $(basename "$binary") does not load LibTorch"
    continue
  fi
  libstdcxx=$(ldd "$binary" | awk '$1 ~ /^libstdc\+\+\.so/ {print $3}')
  [ -n "$libstdcxx" ] || { echo "FAIL: $binary does not load libstdc++"; fail=1; continue; }

  # (1) static: std::filesystem symbols the binary needs that libstdc++ and LibTorch both define.
  comm -12 <(fs_symbols "${torch_libs[@]}") <(fs_symbols "$libstdcxx") > "$log/shared"
  nm -D --undefined-only "$binary" | awk '{print $2}' | sed 's/@.*//' | sort -u > "$log/needed"
  comm -12 "$log/needed" "$log/shared" > "$log/clash"
  if [ -s "$log/clash" ]; then
    echo "FAIL: $(basename "$binary") needs $(wc -l < "$log/clash") std::filesystem symbol(s) that LibTorch exports too:"
    c++filt < "$log/clash" | head -20 | sed 's/^/  /'
    fail=1
    clean=no
  fi

  # (2) run time: bind everything now and read where the std:: symbols went.
  LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$log/bind" timeout 60 "$binary" --help > /dev/null 2>&1 || true
  if ! ls "$log"/bind.* > /dev/null 2>&1; then
    echo "FAIL: no binding log for $binary (LD_DEBUG unsupported?)"
    fail=1
    continue
  fi
  name=$(basename "$binary")
  bad=$(cat "$log"/bind.* | grep -E "binding file [^ ]*/$name( |\[).* to [^ ]*lib(torch|c10)[^ ]*: normal symbol \`[^']*St10filesystem" || true)
  rm -f "$log"/bind.*
  if [ -n "$bad" ]; then
    echo "FAIL: $name binds std::filesystem symbols to LibTorch at run time:"
    echo "$bad" | head -10 | sed 's/^/  /'
    fail=1
  elif [ "$clean" = yes ]; then
    echo "ok: $name (${#torch_libs[@]} LibTorch libraries, no std::filesystem symbol bound to them)"
  fi
done
exit $fail
