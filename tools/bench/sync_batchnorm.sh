#!/usr/bin/env bash
# model.sync_batchnorm against each rank's own BatchNorm statistics, side by side with PyTorch DDP with and
# without SyncBatchNorm.convert_sync_batchnorm: the same shards, network (a conv_stack with two bn layers),
# batch per rank, optimizer, augmentation, epochs and seed; then the cost per step at 2 ranks.
#
# Usage: tools/bench/sync_batchnorm.sh DATA OUT     (DATA: fusetrain-prep shards, e.g. of Fashion-MNIST)
# Environment: RANKS (default 4), BATCH (images per rank, default 4), EPOCHS (default 3), LR (default 0.02),
# SEED (default 42), COST_STEPS_BATCHES (per-rank batches of the 2-rank cost runs, default "4 32"),
# FUSETRAIN_BIN_DIR (default build/bin), PYTHON (default the project's venv), SECTIONS (default "fusetrain
# pytorch cost"), PYTORCH_DEVICE (cpu or cuda, default cpu: PyTorch ships SyncBatchNorm's kernels for GPUs only,
# so on the CPU tools/bench/pytorch_cpu_syncbn.py stands in for them; on one GPU every rank shares it over gloo).
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,9p' "$0"; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
data=$(cd "$1" && pwd) out=$2
bin=${FUSETRAIN_BIN_DIR:-$root/build/bin}
python=${PYTHON:-${FUSETRAIN_CACHE:-$HOME/.cache/fusetrain}/venv/bin/python}
ranks=${RANKS:-4} batch=${BATCH:-4} epochs=${EPOCHS:-3} lr=${LR:-0.02} seed=${SEED:-42}
mpirun=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" -ne 0 ] || mpirun+=(--allow-run-as-root)
mkdir -p "$out"
wants() { [[ " ${SECTIONS:-fusetrain pytorch cost} " == *" $1 "* ]]; }
device=${PYTORCH_DEVICE:-cpu}

config=$out/sync_batchnorm.yaml
cat > "$config" <<EOF
model:
  name: conv_stack
  layers: [{type: conv, out: 16}, bn, relu, {type: maxpool, kernel: 2, stride: 2},
           {type: conv, out: 32}, bn, relu, {type: maxpool, kernel: 2, stride: 2}, {type: linear}]
data: {path: $data, batch_size: $batch, augment: {flip: true, crop_padding: 4}}
optimizer: {name: sgd, lr: $lr, momentum: 0.9, nesterov: true}
train: {epochs: $epochs, seed: $seed, threads: 1}
output: {dir: $out, overwrite: true, save_model: false, tensorboard: false}
EOF

# fusetrain_run NAME RANKS SYNC [--set ...]: one run; prints "test_acc train_s images_per_s" (images/s leaves
# evaluation out).
fusetrain_run() {
  local name=$1 n=$2 sync=$3
  shift 3
  "${mpirun[@]}" -np "$n" "$bin/fusetrain" train --config "$config" --set "output.name=$name" \
    --set "model.sync_batchnorm=$sync" "$@" > "$out/$name.log" 2>&1 || { tail -n 20 "$out/$name.log"; exit 1; }
  local h5=$out/$name.h5
  echo "$("$bin/fusetrain" inspect "$h5" /summary/final_test_acc) $("$bin/fusetrain" inspect "$h5" /summary/train_time_s)" \
    "$("$bin/fusetrain" inspect "$h5" /summary/images_per_s)"
}

# pytorch_run NAME SYNC: DDP over gloo, every rank one torchrun process; prints "test_acc train_s".
pytorch_run() {
  local name=$1 sync=()
  [ "$2" = true ] && sync=(--sync-batchnorm)
  OMP_NUM_THREADS=1 "$python" -m torch.distributed.run --standalone --nproc-per-node "$ranks" \
    "$root/tools/bench/pytorch_baseline.py" --style tuned --ddp --device "$device" --threads 1 --data "$data" \
    --model-config "$config" --batch-size "$batch" --epochs "$epochs" --lr "$lr" --seed "$seed" "${sync[@]}" \
    --precision fp32 --no-compile \
    > "$out/$name.log" 2>&1 || { tail -n 20 "$out/$name.log"; exit 1; }
  local line
  line=$(grep '^images_per_s=' "$out/$name.log")
  echo "$(grep -o 'test_acc=[0-9.]*' <<< "$line" | cut -d= -f2) $(grep -o 'train_s=[0-9.]*' <<< "$line" | cut -d= -f2)"
}

if wants fusetrain || wants pytorch; then
  echo "--- $ranks ranks x $batch images, $epochs epochs, conv_stack (2 bn layers), $(basename "$data"); test accuracy"
  echo "| framework | device | BatchNorm statistics | test_acc | train_s |"
  echo "|---|---|---|---|---|"
fi
if wants fusetrain; then
  for sync in false true; do
    read -r acc seconds _ < <(fusetrain_run "fusetrain-sync-$sync" "$ranks" "$sync")
    printf '| fusetrain | cpu | %s | %.4f | %.1f |\n' "$([ $sync = true ] && echo all ranks || echo per rank)" "$acc" \
      "$seconds"
  done
fi
if wants pytorch; then
  for sync in false true; do
    name="PyTorch DDP"
    [ $sync = false ] || name+=" + convert_sync_batchnorm"
    [ $sync = false ] || [ "$device" != cpu ] || name+=" (CPU kernels of pytorch_cpu_syncbn.py)"
    read -r acc seconds < <(pytorch_run "pytorch-$device-sync-$sync" "$sync")
    printf '| %s | %s | %s | %.4f | %.1f |\n' "$name" "$device" \
      "$([ $sync = true ] && echo all ranks || echo "per rank (rank 0's buffers)")" "$acc" "$seconds"
  done
fi

if wants cost; then
  echo "--- cost per step at 2 ranks, 1 epoch of the same network (from images/s, evaluation left out)"
  echo "| images per rank | per rank ms/step | all ranks ms/step | extra |"
  echo "|---|---|---|---|"
  for b in ${COST_STEPS_BATCHES:-4 32}; do
    read -r _ _ off < <(fusetrain_run "cost-$b-false" 2 false --set "data.batch_size=$b" --set train.epochs=1)
    read -r _ _ on < <(fusetrain_run "cost-$b-true" 2 true --set "data.batch_size=$b" --set train.epochs=1)
    awk -v b="$b" -v a="$off" -v s="$on" 'BEGIN {  # ms per step = 1000 x 2 ranks x b images / images per second
      x = 2000 * b / a; y = 2000 * b / s; printf "| %d | %.2f | %.2f | %+.0f%% |\n", b, x, y, 100 * (y - x) / x }'
  done
fi
