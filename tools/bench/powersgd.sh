#!/usr/bin/env bash
# distributed.compression powersgd against the uncompressed all-reduce, side by side with PyTorch DDP with and
# without its powerSGD_hook (gloo, the same rank and start step): the same shards, network, batch per rank,
# SGD settings, augmentation, epochs and seed. Test accuracy, and fusetrain's bytes per step from its results.
#
# Usage: tools/bench/powersgd.sh DATA OUT NETWORK     (NETWORK: simple_cnn, the coursework's network as
#        configs/coursework/q1b_two_gpus.yaml sets it, or bn_stack, a conv_stack with two bn layers)
# Environment: RANKS (default 2), BATCH (images per rank, default 32), EPOCHS (default 8), LR (default 0.01),
# RANK (PowerSGD's rank, default 4), START (optimizer steps uncompressed first, default 100), SEED (default 42),
# SECTIONS (default "fusetrain pytorch"), FUSETRAIN_BIN_DIR (default build/bin), PYTHON (the project's venv).
set -euo pipefail
[ $# -eq 3 ] || { sed -n '2,10p' "$0"; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
data=$(cd "$1" && pwd) out=$2 network=$3
bin=${FUSETRAIN_BIN_DIR:-$root/build/bin}
python=${PYTHON:-${FUSETRAIN_CACHE:-$HOME/.cache/fusetrain}/venv/bin/python}
ranks=${RANKS:-2} batch=${BATCH:-32} epochs=${EPOCHS:-8} lr=${LR:-0.01} rank=${RANK:-4} start=${START:-100}
seed=${SEED:-42}
mpirun=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" -ne 0 ] || mpirun+=(--allow-run-as-root)
mkdir -p "$out"
wants() { [[ " ${SECTIONS:-fusetrain pytorch} " == *" $1 "* ]]; }

case $network in
  simple_cnn) model="{name: simple_cnn, dropout: 0}" ;;
  bn_stack) model="{name: conv_stack, layers: [{type: conv, out: 16}, bn, relu, {type: maxpool, kernel: 2, stride: 2},
    {type: conv, out: 32}, bn, relu, {type: maxpool, kernel: 2, stride: 2}, {type: linear}]}" ;;
  *) echo "unknown network '$network' (simple_cnn or bn_stack)" >&2; exit 2 ;;
esac
config=$out/$network.yaml
cat > "$config" <<EOF
model: $model
data: {path: $data, batch_size: $batch, augment: {flip: true, crop_padding: 4}}
optimizer: {name: sgd, lr: $lr, momentum: 0.9}
train: {epochs: $epochs, seed: $seed, threads: 1}
distributed: {powersgd_rank: $rank, powersgd_start_step: $start}
output: {dir: $out, overwrite: true, save_model: false, tensorboard: false}
EOF

# fusetrain_run NAME COMPRESSION: prints "test_acc train_s bytes_per_step" (rank 0's all-reduced bytes).
fusetrain_run() {
  local name=$1 h5=$out/$1.h5
  "${mpirun[@]}" -np "$ranks" "$bin/fusetrain" train --config "$config" --set "output.name=$name" \
    --set "distributed.compression=$2" > "$out/$name.log" 2>&1 || { tail -n 20 "$out/$name.log"; exit 1; }
  local steps bytes
  steps=$("$bin/fusetrain" inspect "$h5" /summary/optimizer_steps)
  bytes=$("$bin/fusetrain" inspect "$h5" /ranks/allreduce_bytes | head -n 1)
  echo "$("$bin/fusetrain" inspect "$h5" /summary/final_test_acc) $("$bin/fusetrain" inspect "$h5" /summary/train_time_s)" \
    "$(awk -v b="$bytes" -v s="$steps" 'BEGIN { printf "%.0f", b / s }')"
}

# pytorch_run NAME POWERSGD_RANK: DDP over gloo on the CPU; prints "test_acc train_s".
pytorch_run() {
  local name=$1 line
  OMP_NUM_THREADS=1 "$python" -m torch.distributed.run --standalone --nproc-per-node "$ranks" \
    "$root/tools/bench/pytorch_baseline.py" --style tuned --ddp --device cpu --threads 1 --data "$data" \
    --model-config "$config" --batch-size "$batch" --epochs "$epochs" --lr "$lr" --momentum 0.9 --no-nesterov \
    --seed "$seed" --precision fp32 --powersgd-rank "$2" --powersgd-start-step "$start" \
    > "$out/$name.log" 2>&1 || { tail -n 20 "$out/$name.log"; exit 1; }
  line=$(grep '^images_per_s=' "$out/$name.log")
  echo "$(grep -o 'test_acc=[0-9.]*' <<< "$line" | cut -d= -f2) $(grep -o 'train_s=[0-9.]*' <<< "$line" | cut -d= -f2)"
}

echo "--- $network on $(basename "$data"), $ranks ranks x $batch images, $epochs epochs; PowerSGD rank $rank from step $start"
echo "| framework | gradients | test_acc | train_s | bytes/step (rank 0) |"
echo "|---|---|---|---|---|"
if wants fusetrain; then
  for compression in none powersgd; do
    read -r acc seconds bytes < <(fusetrain_run "fusetrain-$network-$compression" "$compression")
    printf '| fusetrain | %s | %.4f | %.1f | %s |\n' "$compression" "$acc" "$seconds" "$bytes"
  done
fi
if wants pytorch; then
  for r in 0 "$rank"; do
    read -r acc seconds < <(pytorch_run "pytorch-$network-$r" "$r")
    printf '| PyTorch DDP | %s | %.4f | %.1f | - |\n' "$([ "$r" = 0 ] && echo none || echo "powerSGD_hook rank $r")" \
      "$acc" "$seconds"
  done
fi
