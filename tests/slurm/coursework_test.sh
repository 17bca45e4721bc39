#!/usr/bin/env bash
# The whole coursework in CPU smoke mode (jobs/workstation/coursework.sh --smoke, real Fashion-MNIST) and a
# check that its report is complete, filled from the runs it made, recomputable by hand and true on this host.
set -euo pipefail
: "${FUSETRAIN_BIN_DIR:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}" "${FUSETRAIN_PYTHON:?}"
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
  { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
"$FUSETRAIN_PYTHON" -c "import h5py, matplotlib" 2> /dev/null || { echo "SKIP: no h5py/matplotlib"; exit 77; }
work=$FUSETRAIN_TMP/coursework
rm -rf "$work" && mkdir -p "$FUSETRAIN_TMP"
start=$(date +%s)
# LOCAL_SLURM: the launcher comparison starts a private SLURM cluster for its srun row where slurm-wlm is.
LOCAL_SLURM=1 FUSETRAIN_BIN=$FUSETRAIN_BIN_DIR/fusetrain PYTHON=$FUSETRAIN_PYTHON LAUNCHER=$FUSETRAIN_MPIRUN \
  bash "$FUSETRAIN_SOURCE/jobs/workstation/coursework.sh" --smoke --out "$work" | tee "$work.log"
echo "coursework smoke mode took $(($(date +%s) - start)) s"
"$FUSETRAIN_PYTHON" "$FUSETRAIN_SOURCE/tests/slurm/coursework_report_check.py" "$work" "$FUSETRAIN_SOURCE"

# Running again resumes: every run is found done, nothing trains.
FUSETRAIN_BIN=$FUSETRAIN_BIN_DIR/fusetrain PYTHON=$FUSETRAIN_PYTHON LAUNCHER=$FUSETRAIN_MPIRUN \
  bash "$FUSETRAIN_SOURCE/jobs/workstation/coursework.sh" --smoke --out "$work" > "$work.rerun.log"
if grep -q "training on" "$work.rerun.log"; then echo "FAIL: the second run trained again"; exit 1; fi
echo "PASS"
