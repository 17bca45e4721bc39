#!/usr/bin/env bash
# fusetrain plan on the CPU: the link file of e2e.plan_sweep, a profile of 1 rank, predictions for 1 and
# 2 ranks checked against the model computed again in this script (plan_check.py, from the two files alone), a
# run's results file as the profile, the plot, and clear refusals of bad input.
set -euo pipefail
: "${FUSETRAIN_BIN:?}" "${FUSETRAIN_TMP:?}" "${FUSETRAIN_MPIRUN:?}" "${FUSETRAIN_PYTHON:?}"
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 77; }
FT=$FUSETRAIN_BIN/fusetrain
here=$(cd "$(dirname "$0")" && pwd)
work=$FUSETRAIN_TMP/plan
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
# shellcheck disable=SC2206
mpirun=($FUSETRAIN_MPIRUN)

# The link file of e2e.plan_sweep (run first, alone on the machine).
link=$FUSETRAIN_TMP/plan-link/link.json
[ -f "$link" ] || fail "no link file $link: e2e.plan_sweep runs first"
cp "$link" "$work/link.json"
"$FT" plan profile --model simple_cnn --device cpu --batch 8 --steps 3 --warmup 1 --threads 1 \
  --out "$work/profile.json" | tee "$work/profile.log"
grep -q "^profile of simple_cnn on .*, batch 8, 1 rank(s) computing at once, 1 thread(s) each, median of 3 steps" \
  "$work/profile.log" ||
  fail "no profile line"
# Each phase its own (simple_cnn's SGD update takes a small part of what forward and backward take together),
# and the file says what made it.
"$FUSETRAIN_PYTHON" -c 'import json, sys; p = json.load(open(sys.argv[1]))
sys.exit(not 0 < p["optimizer_s"] < p["forward_s"] + p["backward_s"] or p["source"] != "fusetrain plan profile")' \
  "$work/profile.json" || fail "the profile's optimizer time or source is wrong: $(cat "$work/profile.json")"

# Frozen parameters get no gradient and so no bucket: the fast CIFAR-10 network's whitening filter (fitted to
# the data: 24 filters of 3x2x2 over RGB) and its BatchNorm scales (fixed at 1) stay out, so each conv's norm
# adds one vector, its bias, as long as the conv's outputs.
"$FT" plan profile --model fast_cifar --device cpu --batch 2 --steps 1 --warmup 0 --threads 1 \
  --out "$work/fast_cifar.json" > /dev/null
"$FUSETRAIN_PYTHON" - "$work/fast_cifar.json" <<'PY' || fail "fast_cifar's profile buckets frozen parameters"
import collections, json, sys
shapes = [tuple(s) for b in json.load(open(sys.argv[1]))["buckets"] for s in b["shapes"]]
assert (24, 3, 2, 2) not in shapes, "the whitening filter is in a bucket"
filters = collections.Counter(s[0] for s in shapes if len(s) == 4)
vectors = collections.Counter(s[0] for s in shapes if len(s) == 1)
assert filters and all(vectors[c] == n for c, n in filters.items()), f"filters {filters}, vectors {vectors}"
PY
"$FT" plan --profile "$work/profile.json" --link "$work/link.json" --topology 1x1,1x2 \
  --allreduce flat,hierarchical,flat+bf16,flat+powersgd:2 --json "$work/plan.json" | tee "$work/plan.md"
[ "$(grep -c '^| 1 x [12] |' "$work/plan.md")" = 8 ] || fail "expected 8 rows (2 topologies x 4 all-reduces)"
"$FUSETRAIN_PYTHON" "$here/plan_check.py" "$work/profile.json" "$work/link.json" "$work/plan.json"
"$FUSETRAIN_PYTHON" "$FUSETRAIN_SOURCE/tools/report/plan_plot.py" "$work/plan.json" --out "$work/plan.png"
[ -s "$work/plan.png" ] || fail "no plot"

# A finished 1-rank run's phase times as the compute, its buckets from the model and data.
"$FUSETRAIN_BIN/fusetrain-prep" --format idx --input "$src" --output "$work/data" --shards 1 --limit 256 > /dev/null
"$FT" train --config "$FUSETRAIN_SOURCE/configs/quickstart.yaml" --set "data.path=$work/data" --set train.epochs=1 \
  --set train.threads=1 --set train.device=cpu --set "output.dir=$work/runs" --set output.name=one \
  --set output.save_model=false --set output.tensorboard=false > "$work/train.log"
# The results file keeps the command line that made it, word for word.
"$FT" inspect "$work/runs/one.h5" /provenance | grep -qxF "  @command_line = fusetrain train --config \
$FUSETRAIN_SOURCE/configs/quickstart.yaml --set data.path=$work/data --set train.epochs=1 --set train.threads=1 \
--set train.device=cpu --set output.dir=$work/runs --set output.name=one --set output.save_model=false \
--set output.tensorboard=false" || fail "the results file's /provenance lacks the train command line"
"$FT" plan --results "$work/runs/one.h5" --inter 1:50 --intra 100 --topology 1x1,2x1,2x2 --allreduce flat,hierarchical \
  --json "$work/results-plan.json" | tee "$work/results-plan.md"
[ "$(grep -c '^| [12] x [12] |' "$work/results-plan.md")" = 6 ] || fail "expected 6 rows from the results file"
# Its buckets hold the trained model's parameters (the results file's /model/parameters, for Fashion-MNIST's
# 1x28x28 images): on 2 nodes the flat ring moves them once each way, 2 latencies a bucket, at --inter's rate.
params=$("$FT" inspect "$work/runs/one.h5" /model/parameters | awk '{ s += $1 } END { print s }')
"$FUSETRAIN_PYTHON" - "$work/results-plan.json" "$params" <<'PY'
import json, math, sys
plan, params = json.load(open(sys.argv[1])), int(sys.argv[2])
profile = plan["profiles"][0]
assert profile["model"] == "simple_cnn", f"the profile's model is {profile['model']!r}"
row = next(r for r in plan["rows"] if (r["nodes"], r["ranks_per_node"], r["allreduce"]) == (2, 1, "flat"))
expected = 2 * profile["buckets"] * 50e-6 + params * 4 * 8 / 1e9
assert math.isclose(row["allreduce_s"], expected, rel_tol=1e-9), f"2 x 1 flat: {row['allreduce_s']} s, expected {expected}"
print(f"results plan: {params} parameters in {profile['buckets']} buckets, {expected * 1e3:.3f} ms on 2 nodes")
PY

# refuse NAME EXPECTED ARGS...: fusetrain plan ARGS fails with EXPECTED in its message.
refuse() {
  local name=$1 expected=$2
  shift 2
  if "$FT" plan "$@" > "$work/$name.log" 2>&1; then fail "$name was accepted"; fi
  grep -qF -e "$expected" "$work/$name.log" || { cat "$work/$name.log"; fail "$name: unclear error"; }
}
refuse no-profile "give a profile (--profile" --link "$work/link.json"
refuse no-link "give the network: a link file" --profile "$work/profile.json"
refuse no-inter "needs the link between nodes (level inter)" --profile "$work/profile.json" --link "$work/link.json" \
  --topology 2x1
refuse bad-topology "--topology: '2by1' is not NODESxRANKS_PER_NODE" --profile "$work/profile.json" \
  --link "$work/link.json" --topology 2by1
refuse bad-allreduce "all-reduce 'ring': flat or hierarchical" --profile "$work/profile.json" --link "$work/link.json" \
  --allreduce ring
refuse not-a-link "not a fusetrain-link file" --profile "$work/profile.json" --link "$work/profile.json"
refuse one-machine "no profile measured with 2 ranks computing at once" --profile "$work/profile.json" \
  --link "$work/link.json" --topology 1x2 --one-machine
# The link beside compute goes with --one-machine and comes from a sweep beside compute; the idle one the other way.
beside=$FUSETRAIN_TMP/plan-link/link-beside.json
refuse beside-alone "--link-beside-compute is the pace of all-reduces on cores the ranks fill: it needs --one-machine" \
  --profile "$work/profile.json" --link "$work/link.json" --link-beside-compute "$beside"
refuse beside-idle "$work/link.json level intra: swept on an idle machine, not beside compute" \
  --profile "$work/profile.json" --link "$work/link.json" --link-beside-compute "$work/link.json" --one-machine
refuse idle-beside "$beside level intra: swept beside compute (--beside-compute): give it as --link-beside-compute" \
  --profile "$work/profile.json" --link "$beside" --one-machine
"$FT" plan --profile "$work/profile.json" --link "$work/link.json" --link-beside-compute "$beside" --one-machine \
  --topology 1x1 --allreduce flat > "$work/beside.log" || { cat "$work/beside.log"; fail "the link beside compute was refused"; }
if "$FT" plan profile --model simple_cnn --device cpu > "$work/no-out.log" 2>&1; then fail "profile without --out"; fi
grep -q "error: --out is required" "$work/no-out.log" || { cat "$work/no-out.log"; fail "unclear --out error"; }
if "${mpirun[@]}" -np 2 "$FT" bench allreduce --sweep --level inter > "$work/inter.log" 2>&1; then
  fail "--level inter on one node was accepted"
fi
grep -q "level inter measures the link between nodes, but every rank runs on one node" "$work/inter.log" ||
  { cat "$work/inter.log"; fail "unclear --level inter error"; }
echo PASS
