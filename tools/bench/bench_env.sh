# Sourced by the benchmark scripts of tools/bench: the fusetrain binary and the Python with torch they run,
# both overridable (FUSETRAIN_BIN, PYTHON); defines $here (tools/bench), $root (the checkout) and ratio.
# shellcheck shell=bash
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
root=$(cd "$here/../.." && pwd)
FUSETRAIN_BIN=${FUSETRAIN_BIN:-$root/build/bin/fusetrain}
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  venv_python=${FUSETRAIN_CACHE:-$HOME/.cache/fusetrain}/venv/bin/python
  [ -x "$venv_python" ] && PYTHON=$venv_python
fi

# ratio A B: A / B to two decimals, or n/a when either is not a positive number (a failed run).
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "n/a" }'
}
