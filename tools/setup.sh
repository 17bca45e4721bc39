#!/usr/bin/env bash
# Installs everything fusetrain needs on a Debian machine, idempotently: system packages via apt,
# LibTorch (PyPI torch) plus report and export tooling in a per-user virtual environment that fresh clones reuse.
set -euo pipefail

# The cache lives outside the clone so that a fresh clone (CI) reuses the multi-GB torch install.
cache=${FUSETRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fusetrain}
venv=${FUSETRAIN_VENV:-$cache/venv}
torch_version=2.11.0

apt_pkgs=(
  build-essential cmake ninja-build ccache pkg-config
  libopenmpi-dev openmpi-bin
  libhdf5-dev hdf5-tools
  libyaml-cpp-dev libboost-program-options-dev nlohmann-json3-dev
  libgloo-dev libturbojpeg0-dev libpng-dev
  libgtest-dev libssl-dev zlib1g-dev gdb
  dataset-fashion-mnist
  slurm-wlm
  iperf3 jq
)

missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

py=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating virtual environment $venv"
  mkdir -p "$(dirname "$venv")"
  "$py" -m venv "$venv" || { echo "setup: '$py -m venv' failed; install python3-venv" >&2; exit 1; }
fi
have_torch=$("$venv/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null || true)
if [ "$have_torch" != "$torch_version" ]; then
  echo "setup: installing torch==$torch_version into $venv (several GB, once per machine)"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "torch==$torch_version"
fi
# Report tooling (h5py, matplotlib, lizard), the export tools' (tools/export: safetensors, ONNX),
# TensorBoard, whose own reader checks the event files a run writes, and airbench, the reference the fast
# recipe is timed against on GPUs (tools/bench/airbench94.py; found, not imported: importing it needs
# torchvision, which this venv lacks and airbench94.py stands in for), and universalmutator, whose C++ rules
# generate the mutants of tools/mutants/mutate_changes.py.
py_pkgs=(h5py matplotlib numpy pyyaml lizard==1.24.3 safetensors onnx onnxruntime onnxscript tensorboard
         airbench==0.1.8 universalmutator==1.14.1)
"$venv/bin/python" -c 'import h5py, matplotlib, numpy, yaml, lizard, safetensors, onnx, onnxruntime, onnxscript, tensorboard
import universalmutator.mutator
import importlib.util; assert importlib.util.find_spec("airbench")' \
  2>/dev/null || "$venv/bin/python" -m pip install -q "${py_pkgs[@]}"

mkdir -p "$cache/ccache"
echo "setup: ready (venv $venv, ccache $cache/ccache)"
