#!/usr/bin/env bash
# fusetrain inspect on an HDF5 file written here with h5py, whose every value the test knows: the tree with
# shapes and attributes (root attributes on "/  " lines, a group's after its own line), a group's subtree, values
# of datasets (numbers and strings) and attributes (root and group), and missing objects refused by name.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_PYTHON:?}"
"$FUSETRAIN_PYTHON" -c "import h5py" 2> /dev/null || { echo "SKIP: $FUSETRAIN_PYTHON has no h5py"; exit 77; }
work=$FUSETRAIN_TMP/inspect
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
file=$work/tiny.h5
"$FUSETRAIN_PYTHON" - "$file" <<'PY'
import sys
import h5py
import numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.attrs["name"] = "tiny"
    f.attrs["count"] = np.int64(3)
    f.attrs["rate"] = 0.25
    epochs = f.create_group("epochs")
    epochs.attrs["unit"] = "s"
    epochs.create_dataset("test_acc", data=np.array([0.5, 0.75, 0.875]))
    epochs.create_group("inner").create_dataset("grid", data=np.arange(6, dtype=np.int32).reshape(2, 3))
    f.create_dataset("names", data=np.array([b"cat", b"dog"]), dtype=h5py.string_dtype())
PY
FT=$FUSETRAIN_BIN/fusetrain
# expect NAME EXPECTED ARGS...: fusetrain inspect ARGS prints exactly EXPECTED.
expect() {
  local name=$1 expected=$2
  shift 2
  "$FT" inspect "$file" "$@" > "$work/$name.txt" || fail "$name: inspect $* failed"
  [ "$(cat "$work/$name.txt")" = "$expected" ] || { diff <(echo "$expected") "$work/$name.txt" || true; fail "$name"; }
}
expect tree "/  @count = 3
/  @name = tiny
/  @rate = 0.25
/epochs/
  @unit = s
/epochs/inner/
/epochs/inner/grid [2, 3]
/epochs/test_acc [3]
/names [2]"
expect group "/epochs/
  @unit = s
/epochs/inner/
/epochs/inner/grid [2, 3]
/epochs/test_acc [3]" /epochs
expect values "0.5
0.75
0.875
cat
dog
0.25
s
0
1
2
3
4
5" /epochs/test_acc /names /rate /epochs/unit /epochs/inner/grid

# refuse NAME EXPECTED OBJECT: inspect fails naming the file and what is missing.
refuse() {
  if "$FT" inspect "$file" "$3" > "$work/$1.txt" 2>&1; then fail "$1: inspect $3 succeeded"; fi
  grep -qxF "fusetrain inspect: error: $file: $2" "$work/$1.txt" || { cat "$work/$1.txt"; fail "$1: unclear error"; }
}
refuse no-attribute "no dataset or attribute /epochs/nosuch" /epochs/nosuch
refuse no-root-attribute "no dataset or attribute /nosuch" /nosuch
refuse no-group "no object /nogroup/x" /nogroup/x
echo PASS
