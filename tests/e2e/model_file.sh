#!/usr/bin/env bash
# A run keeps its trained network (<name>.model, named by the results file; none with output.save_model off),
# and fusetrain export refuses what it must: an existing --out, an unknown format, a damaged or foreign file.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
work=$FUSETRAIN_TMP/model_file
rm -rf "$work" && mkdir -p "$work"
ft=$FUSETRAIN_BIN/fusetrain

"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 1 --limit 1000 >/dev/null
cat > "$work/run.yaml" <<YAML
model: {name: simple_cnn}
data: {path: $work/data, batch_size: 64, limit_test: 256}
train: {epochs: 1, device: cpu}
output: {dir: $work/runs, name: kept}
YAML
"$ft" train --config "$work/run.yaml" | tee "$work/train.log"
grep -q "^model: $work/runs/kept.model$" "$work/train.log"
[ "$("$ft" inspect "$work/runs/kept.h5" /model_file)" = "$work/runs/kept.model" ]
"$ft" train --config "$work/run.yaml" --set output.name=nomodel --set output.save_model=false >/dev/null
[ ! -e "$work/runs/nomodel.model" ] && [ -z "$("$ft" inspect "$work/runs/nomodel.h5" /model_file)" ]

# expect_fail STATUS PATTERN COMMAND...: the command fails with STATUS and says PATTERN on stderr.
expect_fail() {
  local status=$1 pattern=$2; shift 2
  set +e; "$@" 2>"$work/err.txt"; local got=$?; set -e
  [ "$got" = "$status" ] || { echo "expected status $status, got $got: $*"; cat "$work/err.txt"; exit 1; }
  grep -qF -- "$pattern" "$work/err.txt" || { echo "expected '$pattern' from: $*"; cat "$work/err.txt"; exit 1; }
}
out=$work/kept.safetensors
"$ft" export --checkpoint "$work/runs/kept.model" --format safetensors --out "$out"
before=$(sha256sum "$out")
expect_fail 1 "--out $out exists and is kept: choose another path or use --force to replace it" \
  "$ft" export --checkpoint "$work/runs/kept.model" --format safetensors --out "$out"
[ "$(sha256sum "$out")" = "$before" ]
# The output is claimed before any input is read: an existing --out is named even when the checkpoint is damaged.
head -c 20000 "$work/runs/kept.model" > "$work/cut.model"
expect_fail 1 "--out $out exists and is kept: choose another path or use --force to replace it" \
  "$ft" export --checkpoint "$work/cut.model" --format safetensors --out "$out"
"$ft" export --checkpoint "$work/runs/kept.model" --format safetensors --out "$out" --force
expect_fail 1 "--format 'onnx' is not an export format: use safetensors or torch" \
  "$ft" export --checkpoint "$work/runs/kept.model" --format onnx --out "$work/x.onnx"
expect_fail 1 "$work/cut.model is damaged (no checksum: the file is truncated or was written without one)" \
  "$ft" export --checkpoint "$work/cut.model" --format torch --out "$work/cut.pt"
expect_fail 1 "$work/run.yaml is not a fusetrain model file or checkpoint (not a LibTorch archive)" \
  "$ft" export --checkpoint "$work/run.yaml" --format torch --out "$work/yaml.pt"
expect_fail 2 "--format" "$ft" export --checkpoint "$work/runs/kept.model" --out "$work/noformat.pt"
[ ! -e "$work/x.onnx" ] && [ ! -e "$work/cut.pt" ] && [ ! -e "$work/yaml.pt" ] && [ ! -e "$work/noformat.pt" ]
! ls "$work" "$work/runs" | grep -q "\.partial-"
echo "model file and export errors: ok"
