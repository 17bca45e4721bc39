#!/usr/bin/env bash
# Installs what fusetrain needs, idempotently. What is missing is decided by what the build looks for (the probe
# tools/setup/probe includes the build's own cmake/FusetrainDependencies.cmake; programs and files are looked up),
# not by the package manager, so modules and Spack count. With root, or sudo without a password, it installs the
# missing Debian packages (apt); without, it prints where each comes from (Debian, Spack, module) and stops, or,
# for what only some tests need, says what is skipped. cmake and ninja may come from PyPI instead. LibTorch (PyPI
# torch) and the report and export tooling go into a per-user virtual environment that fresh clones reuse.
#
# usage: tools/setup.sh [--for all|demo|programs]
#   all (default): everything make test uses; demo: the Fashion-MNIST data is needed too; programs: only what
#   building the programs needs (tests/install, Apptainer, docs/clusters.md), nothing for the tests to run.
# Environment: FUSETRAIN_CACHE (default ~/.cache/fusetrain), FUSETRAIN_VENV (default $FUSETRAIN_CACHE/venv),
#   CMAKE_ARGS (the options the build will be configured with, e.g. -DCMAKE_PREFIX_PATH=...; -DBUILD_TESTING=OFF
#   drops the tests' needs; -DTorch_DIR=... brings one's own LibTorch, so torch is not installed), PYTHON.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The cache lives outside the clone so that a fresh clone (CI) reuses the multi-GB torch install.
cache=${FUSETRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fusetrain}
venv=${FUSETRAIN_VENV:-$cache/venv}
torch_version=2.11.0
usage="usage: tools/setup.sh [--for all|demo|programs]"
purpose=all
case "${1:-}" in
  --for) purpose=${2:?$usage} ;;
  "") ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
# What must be there (else stop), and what else is installed with root (without, only named): rows' needs.
case $purpose in
  all) wanted="build tests" extras="optional check demo" ;;
  demo) wanted="build tests demo" extras="optional check" ;;
  programs) wanted="build tests" extras="optional" ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
read -r -a cmake_args <<< "${CMAKE_ARGS:-}"

# Who may install Debian packages: root, or a user whom sudo lets in without a password (never prompted).
sudo_cmd=()
can_install=0
if [ "$(id -u)" -eq 0 ]; then
  can_install=1
elif command -v sudo > /dev/null && sudo -n true 2> /dev/null < /dev/null; then
  can_install=1 sudo_cmd=(sudo -n)
fi

# The table: tools/setup/dependencies.txt, one array per column.
names=() needs=() finds=() debs=() specs=() modules=()
while read -r name need find deb spec module; do
  names+=("$name") needs+=("$need") finds+=("$find") debs+=("$deb") specs+=("$spec") modules+=("$module")
done < <(grep -v '^#' "$here/setup/dependencies.txt" | grep .)

probe_ran=0 probe_missing=" " probe_log=""
# Runs the probe project (about 1 s) when CMake 3.22+, the compilers and Ninja or make are there; sets
# probe_missing (probe_ran=0 leaves every row the probe decides missing).
probe() {
  probe_ran=0 probe_missing=" "
  have cmake && have compilers || return 0
  local dir generator=()
  dir=$(mktemp -d "${TMPDIR:-/tmp}/fusetrain-probe.XXXXXX")
  if command -v ninja > /dev/null; then generator=(-G Ninja); elif ! command -v make > /dev/null; then return 0; fi
  if ! cmake -S "$here/setup/probe" -B "$dir" "${generator[@]}" "-DPROBE_OUT=$dir/missing" "${cmake_args[@]}" \
       > "$dir/log" 2>&1; then
    probe_log=$(tail -n 30 "$dir/log")
    rm -rf "$dir"
    echo "setup: the dependency probe (tools/setup/probe) failed to configure:" >&2
    echo "$probe_log" >&2
    exit 1
  fi
  probe_missing=" $(tr '\n;' '  ' < "$dir/missing") "
  probe_ran=1
  rm -rf "$dir"
}

# have NAME: is the dependency of that name (a row of the table) present?
have() {
  local i
  for i in "${!names[@]}"; do [ "${names[$i]}" = "$1" ] && { present "$i"; return; }; done
  return 1
}

# present ROW: what the row's found-by column says to look at is there.
present() {
  local find=${finds[$1]}
  case $find in
    cmake) [ "$probe_ran" = 1 ] && [[ "$probe_missing" != *" ${names[$1]} "* ]] ;;
    program:cmake) command -v cmake > /dev/null &&
                   [ "$(printf '%s\n' 3.22 "$(cmake --version | sed -n 's/^cmake version //p')" | sort -V | head -n1)" = 3.22 ] ;;
    program:*) command -v "${find#program:}" > /dev/null ;;
    file:*) [ -e "${find#file:}" ] ;;
    compiler) command -v "${CC:-cc}" > /dev/null && command -v "${CXX:-c++}" > /dev/null ;;
    *) true ;;   # venv (checked when the environment is made) and - (not checked)
  esac
}

# The rows (indices) missing now, among the needs given.
missing_rows() {
  local i
  for i in "${!names[@]}"; do
    [[ " $* " == *" ${needs[$i]} "* ]] && ! present "$i" && echo "$i"
  done
  return 0
}

# Prints the table of the rows given: the dependency, its Debian package, Spack spec and usual module.
print_table() {
  local i
  printf '  %-15s %-9s %-30s %-24s %s\n' dependency need "Debian package" "Spack spec" "module (typical)"
  for i in "$@"; do
    printf '  %-15s %-9s %-30s %-24s %s\n' "${names[$i]}" "${needs[$i]}" "${debs[$i]}" "${specs[$i]}" "${modules[$i]}"
  done
}

apt_install() {
  echo "setup: installing Debian packages: $*"
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

# With root: every missing Debian package in one apt call, as the rows decide (all of the probe's rows when the
# probe could not run yet), then the probe again to confirm the build will find them.
install_system_packages() {
  local rows=() pkgs=() i
  mapfile -t rows < <(missing_rows "$wanted" "$extras")
  [ ${#rows[@]} -gt 0 ] || return 0
  for i in "${rows[@]}"; do [ "${debs[$i]}" = - ] || pkgs+=("${debs[$i]}"); done
  apt_install "${pkgs[@]}"
  probe
  mapfile -t rows < <(missing_rows build tests)
  if [ ${#rows[@]} -gt 0 ]; then
    echo "setup: still not found after installing their packages:" >&2
    print_table "${rows[@]}" >&2
    exit 1
  fi
}

# Without root: cmake and ninja from PyPI (into the virtual environment, linked from $cache/bin, which the
# Makefile puts first on PATH); everything else the build needs must be there, or setup stops naming where it comes from.
check_without_root() {
  local rows=() skipped=()
  if ! have cmake || ! have ninja; then
    make_venv
    echo "setup: cmake or ninja missing (or CMake older than 3.22): installing both from PyPI into $venv"
    "$venv/bin/python" -m pip install -q "cmake>=3.22,<4" ninja
    mkdir -p "$cache/bin"
    ln -sf "$venv/bin/cmake" "$venv/bin/ninja" "$cache/bin/"
    export PATH=$cache/bin:$PATH
    probe
  fi
  mapfile -t rows < <(missing_rows "$wanted")
  mapfile -t skipped < <(missing_rows "$extras")
  if [ ${#rows[@]} -gt 0 ]; then
    echo "setup: fusetrain's build needs what is not found here, and this account cannot install Debian packages" >&2
    echo "(not root, and sudo asks for a password or is absent). Load the modules, install the Spack specs, or" >&2
    echo "ask for the Debian packages; with modules or Spack, CMAKE_PREFIX_PATH must name their prefixes:" >&2
    print_table "${rows[@]}" >&2
    echo "Then run tools/setup.sh again (docs/clusters.md, \"Building on a cluster\")." >&2
    exit 1
  fi
  if [ ${#skipped[@]} -gt 0 ]; then
    echo "setup: not installed (no root), skipped: the build leaves out what needs them (optional), tests that"
    echo "need them skip (check), make demo stops without its data (demo):"
    print_table "${skipped[@]}"
  fi
}

# The virtual environment, made with the system's Python (python3-venv on Debian).
make_venv() {
  [ ! -x "$venv/bin/python" ] || return 0
  local py=${PYTHON:-python3}
  echo "setup: creating virtual environment $venv"
  mkdir -p "$(dirname "$venv")"
  "$py" -m venv "$venv" && return 0
  if [ "$can_install" = 1 ]; then
    apt_install python3-venv && "$py" -m venv "$venv" && return 0
  fi
  echo "setup: '$py -m venv' failed: Python's venv is missing" >&2
  local i; for i in "${!names[@]}"; do [ "${names[$i]}" != python3-venv ] || print_table "$i" >&2; done
  exit 1
}

# LibTorch from PyPI (unless CMAKE_ARGS names one's own Torch_DIR), plus the report tooling (h5py, matplotlib,
# lizard), the export tools' (tools/export: safetensors, ONNX), TensorBoard, whose own reader checks the event
# files a run writes, airbench, the reference the fast recipe is timed against on GPUs (tools/bench/airbench94.py;
# found, not imported: importing it needs torchvision, which this venv lacks and airbench94.py stands in for), and
# universalmutator, whose C++ rules generate the mutants of tools/mutants/mutate_changes.py.
install_python_packages() {
  make_venv
  if [[ " ${cmake_args[*]} " == *" -DTorch_DIR="* ]]; then
    echo "setup: LibTorch from CMAKE_ARGS' Torch_DIR; torch is not installed"
  else
    local have_torch
    have_torch=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("torch").split("+")[0])' \
                 2>/dev/null || true)
    if [ "$have_torch" != "$torch_version" ]; then
      echo "setup: installing torch==$torch_version into $venv (several GB, once per machine)"
      "$venv/bin/python" -m pip install -q --upgrade pip
      "$venv/bin/python" -m pip install -q "torch==$torch_version"
    fi
  fi
  # Looked up, not imported (importing them takes seconds, and setup runs before every make demo and make test).
  local py_pkgs=(h5py matplotlib numpy pyyaml lizard==1.24.3 safetensors onnx onnxruntime onnxscript tensorboard
                 airbench==0.1.8 universalmutator==1.14.1)
  "$venv/bin/python" -c 'import importlib.util, sys; sys.exit(any(importlib.util.find_spec(m) is None for m in sys.argv[1:]))' \
    h5py matplotlib numpy yaml lizard safetensors onnx onnxruntime onnxscript tensorboard universalmutator airbench \
    2>/dev/null || "$venv/bin/python" -m pip install -q "${py_pkgs[@]}"
}

[ ! -d "$cache/bin" ] || export PATH=$cache/bin:$PATH
probe
if [ "$can_install" = 1 ]; then
  install_system_packages
else
  check_without_root
fi
install_python_packages
mkdir -p "$cache/ccache"
echo "setup: ready (venv $venv, ccache $cache/ccache)"
