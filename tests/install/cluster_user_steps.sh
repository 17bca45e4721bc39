#!/usr/bin/env bash
# What a new cluster user does, run by cluster_user_test.sh as an account without root or sudo (a login shell,
# no standard input): setup against the packages already there, then with yaml-cpp hidden from the build; the
# build, install and `module load` of docs/clusters.md; the quickstart on 2 ranks from a folder outside the clone,
# the clone deleted first, so only the installed files (and LibTorch) are there. Prints each phase's start time.
# Environment: FT_WORK (the account's folder: src/ the clone, run/ where it trains), FUSETRAIN_VENV, FT_COMMIT
# (the commit of the build tree's own build, so that every object is a compiler-cache hit), FT_YAML_CPP_DIR.
set -euo pipefail
work=${FT_WORK:?}
prefix=$work/opt/fusetrain/0.1.0
fail() { echo "FAIL: $*" >&2; exit 1; }
phase() { echo "== ${SECONDS}s: $*"; }
# run LOG COMMAND...: runs COMMAND with its output in LOG, which is shown when it fails.
run() {
  local log=$1; shift
  "$@" > "$log" 2>&1 || { local status=$?; cat "$log"; fail "exit $status: $*"; }
}

phase "the account: $(id -un), no root, no sudo, Lmod in its login shell"
[ "$(id -u)" -ne 0 ] || fail "running as root"
! sudo -n true 2> /dev/null || fail "sudo works without a password for $(id -un)"
type module > /dev/null 2>&1 || fail "no module command in a login shell (Lmod's /etc/profile.d/lmod.sh)"
# Outside root's home the venv and the compiler cache are not bound back: they must be readable as they are.
"$FUSETRAIN_VENV/bin/python" -c '' 2> /dev/null ||
  { echo "SKIP: $(id -un) cannot run the venv's Python ($FUSETRAIN_VENV), whose LibTorch the build uses"; exit 77; }
[ -r "$CCACHE_DIR" ] && [ -x "$CCACHE_DIR" ] ||
  { echo "SKIP: $(id -un) cannot read the compiler cache $CCACHE_DIR: the build would take minutes"; exit 77; }
cd "$work/src"
# The build commands of docs/clusters.md ("Building on a cluster"), run as written, with CMAKE_ARGS set as there
# (plus the commit of the build tree's own build).
mapfile -t commands < <(sed -n '/^## Building on a cluster/,/^```$/p' docs/clusters.md |
  grep -E '^(tools/setup\.sh|cmake) ' | sed 's/ *# \[[a-z]*\]$//')
[ "${#commands[@]}" -eq 4 ] || fail "docs/clusters.md's build block has ${#commands[@]} setup and cmake commands, not 4"
export CMAKE_ARGS="-DBUILD_TESTING=OFF -DCMAKE_INSTALL_PREFIX=$prefix -DFUSETRAIN_GIT_COMMIT=$FT_COMMIT"

phase "${commands[0]}: every system package is present, nothing to install"
run "$work/setup.log" bash -c "${commands[0]}"
cat "$work/setup.log"
! grep -q "installing" "$work/setup.log" || fail "setup installed something"

phase "the same with yaml-cpp hidden from the build: it stops with the table naming it"
status=0
CMAKE_ARGS="$CMAKE_ARGS -DCMAKE_IGNORE_PATH=/usr${FT_YAML_CPP_DIR#/usr};${FT_YAML_CPP_DIR#/usr}" \
  bash -c "${commands[0]}" > "$work/hidden.log" 2>&1 || status=$?
cat "$work/hidden.log"
[ "$status" -ne 0 ] || fail "setup exited 0 with yaml-cpp hidden"
grep -Eq '^ +yaml-cpp +build +libyaml-cpp-dev +yaml-cpp +yaml-cpp$' "$work/hidden.log" ||
  fail "the table has no row 'yaml-cpp build libyaml-cpp-dev yaml-cpp yaml-cpp'"
rows=$(grep -Ec '^  [^ ]' "$work/hidden.log")
[ "$rows" -eq 2 ] || fail "the table has $((rows - 1)) rows; only yaml-cpp is missing"

phase "configure, build the programs, install into $prefix"
for i in 1 2 3; do run "$work/build-$i.log" bash -c "${commands[$i]}"; done
cd "$work/run"
rm -rf "$work/src"

phase "module load fusetrain/0.1.0, from a folder outside the clone (deleted)"
module use "$prefix/share/modulefiles/lmod"
module load fusetrain/0.1.0
[ "$(command -v fusetrain)" = "$prefix/bin/fusetrain" ] || fail "fusetrain on PATH is $(command -v fusetrain)"
[ "$FUSETRAIN_BIN" = "$prefix/bin/fusetrain" ] || fail "FUSETRAIN_BIN is $FUSETRAIN_BIN"
[ -z "${LD_LIBRARY_PATH:-}" ] || fail "LD_LIBRARY_PATH is set: $LD_LIBRARY_PATH"
version=$(fusetrain --version)
[ "$version" = "fusetrain 0.1.0 ($FT_COMMIT)" ] || fail "fusetrain --version: $version"
env | grep '^FUSETRAIN_' | sort > "$work/lua.env"

phase "the quickstart on 2 ranks through the installed job script"
run "$work/prep.log" fusetrain-prep --format idx --input /usr/share/datasets/fashion-mnist --output data/fashion-mnist \
  --shards 2 --name fashion-mnist --limit 2000
CONFIG=$FUSETRAIN_CONFIGS/quickstart.yaml NP=2 \
  MPIRUN="mpirun --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism none" \
  run "$work/train.log" "$FUSETRAIN_JOBS/workstation/run.sh" --set train.epochs=1
cat "$work/train.log"
for rank in 0 1; do
  grep -q "^Rank $rank, Epoch \[1/1\]" "$work/train.log" || fail "no epoch line from rank $rank"
done
! grep -q "not built" "$work/train.log" || fail "run.sh did not find the installed loopback library"
# Chance is 10%; one epoch on 2000 images reaches 33.7% (tests/README.md): the bound is twice chance.
acc=$(sed -n 's/^done:.*final test acc \([0-9.]*\)%.*/\1/p' "$work/train.log")
[ -n "$acc" ] && awk -v a="$acc" 'BEGIN { exit !(a >= 20) }' || fail "final test accuracy '$acc'% is under 20%"
[ -f runs/quickstart.h5 ] && [ -f runs/quickstart.model ] || fail "no results file or model in $PWD/runs"
run "$work/report.log" fusetrain report runs/quickstart.h5

phase "the Tcl module file sets the same"
module purge
module unuse "$prefix/share/modulefiles/lmod"
module use "$prefix/share/modulefiles/tcl"
module load fusetrain/0.1.0
env | grep '^FUSETRAIN_' | sort | diff "$work/lua.env" - || fail "the Tcl module file differs from the Lua one"
[ "$(command -v fusetrain)" = "$prefix/bin/fusetrain" ] || fail "fusetrain on PATH is $(command -v fusetrain)"
phase "passed"
