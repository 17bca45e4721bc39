#!/usr/bin/env bash
# `fusetrain sweep` plans, without SLURM or training: every shipped sweep expands into scripts that parse;
# the generated array runner and workstation plan start the right command per point (through stand-in
# launchers), forward SIGUSR1 and requeue on exit 75; bad keys and stale results are refused.
set -euo pipefail
: "${FUSETRAIN_BIN_DIR:?}" "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_TMP:?}"
bin=$FUSETRAIN_BIN_DIR/fusetrain
exe=$(readlink -f "$bin")  # the scripts name the binary as the kernel does
work=$FUSETRAIN_TMP/sweep_plan
rm -rf "$work" && mkdir -p "$work/fake"
fail() { echo "FAIL: $*"; exit 1; }

# Every shipped config with a sweep: block plans, and its scripts are valid bash.
count=0
while IFS= read -r config; do
  out=$work/shipped/$(basename "$config" .yaml)
  "$bin" sweep "$config" --out "$out" > /dev/null
  bash -n "$out/run.sh" && bash -n "$out/sweep.sbatch"
  points=$(grep -vc '^#' "$out/points.tsv")
  grep -q "^#SBATCH --array=0-$((points - 1))\$" "$out/sweep.sbatch" || fail "$config: wrong --array"
  [ "$(grep -c ' -np ' "$out/run.sh")" -eq "$points" ] || fail "$config: run.sh lacks a line per point"
  count=$((count + 1))
done < <(grep -l '^sweep:' "$FUSETRAIN_SOURCE"/configs/*/*.yaml)
[ "$count" -ge 8 ] || fail "only $count shipped sweeps found"

# The batch-size sweep in detail.
out=$work/batch
"$bin" sweep "$FUSETRAIN_SOURCE/configs/coursework/batch_size.yaml" --out "$out" | tee "$work/plan.log"
grep -q "sweep batch_size: 8 points, up to 2 rank(s)" "$work/plan.log"
grep -q '^#SBATCH --ntasks=2$' "$out/sweep.sbatch"
grep -q '^#SBATCH --signal=B:USR1@120$' "$out/sweep.sbatch"
grep -q "^SWEEP_DIR=\${SWEEP_DIR:-$out}\$" "$out/sweep.sbatch"
grep -q "name: p003-batch_size=32-ranks=2" "$out/manifest.yaml"
grep -q "results: $out/results/p003-batch_size=32-ranks=2.h5" "$out/manifest.yaml"
grep -q "^sweep:" "$out/config.yaml" && fail "config.yaml kept the sweep block"
# The coursework configs ask for NCCL (GPU clusters); the plan must still be a valid config on a CPU host.
"$bin" train --config "$out/config.yaml" --dry-run --set distributed.backend=mpi > /dev/null

# Stand-ins: a launcher that records its arguments (and can wait for SIGUSR1), and scontrol.
cat > "$work/fake/launcher" <<'EOF'
#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
if [ -n "${FAKE_WAIT:-}" ]; then
  trap 'echo "got USR1" >> "$FAKE_LOG"; exit 75' USR1
  touch "$FAKE_WAIT"; for _ in $(seq 100); do sleep 0.1; done; exit 1
fi
exit "${FAKE_STATUS:-0}"
EOF
cat > "$work/fake/scontrol" <<'EOF'
#!/usr/bin/env bash
echo "scontrol $*" >> "$FAKE_LOG"
EOF
chmod +x "$work/fake/launcher" "$work/fake/scontrol"
export PATH=$work/fake:$PATH FAKE_LOG=$work/fake.log LAUNCHER=$work/fake/launcher

SLURM_ARRAY_TASK_ID=3 SLURM_JOB_ID=41 bash "$out/sweep.sbatch" > "$work/task.log"
expected="-n 2 $exe train --config $out/config.yaml --set data.batch_size=32 --set output.dir=$out/results"
expected+=" --set output.name=p003-batch_size=32-ranks=2"
[ "$(cat "$FAKE_LOG")" = "$expected" ] || fail "array task 3 ran: $(cat "$FAKE_LOG")"

rm -f "$FAKE_LOG"
status=0; FAKE_STATUS=75 SLURM_ARRAY_TASK_ID=0 SLURM_JOB_ID=42 bash "$out/sweep.sbatch" > "$work/task.log" || status=$?
if ! { [ "$status" -eq 75 ] && grep -q "^scontrol requeue 42$" "$FAKE_LOG"; }; then
  fail "exit 75 did not requeue (status $status)"
fi

rm -f "$FAKE_LOG" "$work/started"
FAKE_WAIT=$work/started SLURM_ARRAY_TASK_ID=1 SLURM_JOB_ID=43 bash "$out/sweep.sbatch" > "$work/task.log" &
task=$!
for _ in $(seq 50); do [ -f "$work/started" ] && break; sleep 0.1; done
kill -USR1 "$task"
status=0; wait "$task" || status=$?
if ! { [ "$status" -eq 75 ] && grep -q "^got USR1$" "$FAKE_LOG" && grep -q "^scontrol requeue 43$" "$FAKE_LOG"; }; then
  fail "SIGUSR1 was not forwarded and requeued (status $status): $(cat "$FAKE_LOG")"
fi

# The workstation plan: one launch per point, finished points skipped.
rm -f "$FAKE_LOG"
touch "$out/results/p000-batch_size=16-ranks=1.h5"
MPIRUN=$work/fake/launcher bash "$out/run.sh"
[ "$(wc -l < "$FAKE_LOG")" -eq 7 ] || fail "run.sh launched $(wc -l < "$FAKE_LOG") points, not 7"
last="-np 2 $exe train --config $out/config.yaml --set data.batch_size=128 --set output.dir=$out/results"
last+=" --set output.name=p007-batch_size=128-ranks=2"
[ "$(tail -n 1 "$FAKE_LOG")" = "$last" ] || fail "run.sh's last launch: $(tail -n 1 "$FAKE_LOG")"

# A plan may not be replaced under results of another plan; --dry-run writes nothing.
sed 's/\[16, 32, 64, 128\]/[16, 32]/' "$FUSETRAIN_SOURCE/configs/coursework/batch_size.yaml" > "$work/batch.yaml"
status=0; "$bin" sweep "$work/batch.yaml" --out "$out" 2> "$work/stale.err" || status=$?
if ! { [ "$status" -eq 1 ] && grep -q "holds results or checkpoints of a different plan" "$work/stale.err"; }; then
  fail "stale plan accepted (status $status)"
fi
"$bin" sweep "$work/batch.yaml" --out "$work/dry" --dry-run | grep -q "^p003-batch_size=32-ranks=2$"
[ ! -e "$work/dry" ] || fail "--dry-run wrote $work/dry"

# --set reaches every point's command; a swept key cannot be set.
"$bin" sweep "$FUSETRAIN_SOURCE/configs/coursework/q2c_regularization.yaml" --out "$work/set" --dry-run \
  --set data.path=/scratch/cifar10 --set train.epochs=3 > "$work/set.log"
[ "$(grep -c -- "--set data.path=/scratch/cifar10 --set train.epochs=3 --set output.dir=" "$work/set.log")" -eq 4 ] ||
  fail "--set did not reach the 4 points: $(cat "$work/set.log")"
status=0; "$bin" sweep "$FUSETRAIN_SOURCE/configs/coursework/batch_size.yaml" --out "$work/set2" \
  --set data.batch_size=8 2> "$work/set.err" || status=$?
[ "$status" -eq 2 ] && grep -q "set data.batch_size=8: key 'data.batch_size' is swept by" "$work/set.err" ||
  fail "a swept --set key was accepted (status $status): $(cat "$work/set.err")"

# A runner that is not a bash script, or has no command after its #SBATCH header, is refused by name and
# nothing is written.
printf 'echo not a script\n' > "$work/not_bash.sbatch"
printf '#!/usr/bin/env bash\n#SBATCH --time=1:00:00\n# comments only\n' > "$work/header_only.sbatch"
for runner in not_bash:"expected a bash script" header_only:"no commands after the #SBATCH header"; do
  status=0; "$bin" sweep "$work/batch.yaml" --out "$work/runner-${runner%%:*}" --runner "$work/${runner%%:*}.sbatch" \
    2> "$work/runner.err" || status=$?
  if ! { [ "$status" -eq 1 ] && grep -q "$work/${runner%%:*}.sbatch: ${runner#*:}" "$work/runner.err"; }; then
    fail "runner ${runner%%:*} accepted (status $status): $(cat "$work/runner.err")"
  fi
  [ ! -e "$work/runner-${runner%%:*}" ] || fail "a refused runner left $work/runner-${runner%%:*}"
done

# Mistakes name the file, line, column and key.
printf 'model: {name: simple_cnn}\nsweep:\n  grid:\n    data.batchsize: [16, 32]\n' > "$work/bad.yaml"
status=0; "$bin" sweep "$work/bad.yaml" --out "$work/bad" 2> "$work/bad.err" || status=$?
[ "$status" -eq 2 ] || fail "a bad key exited $status, not 2"
grep -q "$work/bad.yaml:4:5: .*data.batchsize.*did you mean 'data.batch_size'" "$work/bad.err" ||
  fail "unhelpful message: $(cat "$work/bad.err")"
echo "PASS"
