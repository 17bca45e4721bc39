#!/usr/bin/env bash
# The whole coursework in one command: every config of configs/coursework/ trained (sweeps point by point),
# the launcher comparison, the kernel and RGB-to-gray benchmarks, then one report by tools/report/coursework.py.
#
# Usage: jobs/workstation/coursework.sh [--smoke | --full] [--out DIR] [--data DIR] [--gray-data DIR]
#   --smoke  on the CPU: real Fashion-MNIST (/usr/share/datasets/fashion-mnist) cut to SMOKE_TRAIN training
#            and SMOKE_TEST test images, 2 epochs (the overfitting study: 48 images, full-batch Adam, 40 epochs),
#            the batch-size limit on the CPU from 16 to 128: minutes (the default). SMOKE_TRAIN's default gives
#            the largest batch (128 per rank on 2 ranks) 4 steps per epoch.
#   --full   the configs as written, on CIFAR-10 shards in --data (default data/cifar10) and the GPUs here
#            (the batch-size limit: ResNet-18 at 224x224, as the article, doubled up to out of memory on GPU 0)
#   --out    output folder (default runs/coursework-smoke or runs/coursework); the report is OUT/report/
#            coursework.{md,html}. Running again resumes: runs whose results file exists are skipped.
#   --gray-data  shards of the RGB-to-gray study, train split (default: smoke mode 20 colour CIFAR-10 images
#            from ../shared/data/cifar10-jpg.tar.xz when it is there, else the training data); full mode: 200
#            images at 128x128, as the report's STL-10: fusetrain-prep --format stl10 --input DIR --output D --limit 200
# Environment: FUSETRAIN_BIN, FUSETRAIN_PREP (default build/bin/...), PYTHON (default the project venv's),
#   LAUNCHER (starts the ranks, given -n RANKS; default mpirun --oversubscribe --bind-to none, plus
#   --allow-run-as-root for root; jobs/slurm/coursework.sbatch sets srun), NGPUS (GPUs to use; default
#   counted by nvidia-smi in full mode, 0 in smoke mode), SMOKE_TRAIN (1024), SMOKE_TEST (256),
#   LOCAL_SLURM=1 (start a private SLURM cluster for the srun launcher row, see tools/bench/launchers.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mode=smoke out="" data="" gray_data=""
while [ $# -gt 0 ]; do
  case $1 in
    --smoke|--full) mode=${1#--} ;;
    --out) out=$2; shift ;;
    --data) data=$2; shift ;;
    --gray-data) gray_data=$2; shift ;;
    -h|--help) sed -n '4,/^[^#]/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "coursework.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
bin=${FUSETRAIN_BIN:-$root/build/bin/fusetrain}
prep=${FUSETRAIN_PREP:-$(dirname "$bin")/fusetrain-prep}
python=${PYTHON:-${FUSETRAIN_CACHE:-$HOME/.cache/fusetrain}/venv/bin/python}
default_launcher="mpirun --oversubscribe --bind-to none"
[ "$(id -u)" -ne 0 ] || default_launcher+=" --allow-run-as-root"
launcher=${LAUNCHER:-$default_launcher}
configs=$root/configs/coursework
[ -x "$bin" ] || { echo "coursework.sh: $bin not found: build first (make build) or set FUSETRAIN_BIN" >&2; exit 2; }
[ -z "$gray_data" ] || [ -d "$gray_data" ] || { echo "coursework.sh: --gray-data $gray_data: no such folder" >&2; exit 2; }

common=()   # --set options of every run
if [ "$mode" = smoke ]; then
  out=${out:-runs/coursework-smoke}
  mkdir -p "$out" && out=$(cd "$out" && pwd)
  ngpus=0
  src=/usr/share/datasets/fashion-mnist
  data=${data:-$out/data}
  if [ ! -f "$data/test-00000-of-00002.h5" ]; then
    [ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "coursework.sh: $src missing (dataset-fashion-mnist)" >&2; exit 2; }
    "$prep" --format idx --input "$src" --output "$data" --shards 2 --limit 2000 --name fashion-mnist > /dev/null
  fi
  # Evaluation batches of 64 split the small test split into several batches on 1 rank and on 2 alike (as the
  # full test split does), so a run's peak memory compares like with like between rank counts.
  common+=(--set "data.limit_train=${SMOKE_TRAIN:-1024}" --set "data.limit_test=${SMOKE_TEST:-256}"
           --set data.test_batch_size=64
           --set train.epochs=2 --set train.device=cpu --set train.threads=1)
else
  out=${out:-runs/coursework}
  data=${data:-data/cifar10}
  if [ -n "${NGPUS:-}" ]; then ngpus=$NGPUS
  elif [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then ngpus=$(tr ',' '\n' <<< "$CUDA_VISIBLE_DEVICES" | grep -c .)
  else ngpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU'); fi
fi
common+=(--set "data.path=$data")
backend=()  # runs that do not compare backends: NCCL with a GPU per rank, else Gloo (sharing one GPU)
if [ "$ngpus" -eq 1 ]; then backend=(--set distributed.backend=gloo --set distributed.allow_device_sharing=true)
elif [ "$ngpus" -eq 0 ]; then backend=(--set distributed.backend=gloo); fi
mkdir -p "$out/results" "$out/logs" "$out/sweeps"
out=$(cd "$out" && pwd)
skipped=$out/skipped.tsv
printf 'experiment\tpoint\treason\n' > "$skipped"
printf 'mode\t%s\ngpus\t%s\ndata\t%s\nlauncher\t%s\n' "$mode" "$ngpus" "$data" "$launcher" > "$out/environment.tsv"
"$bin" info | sed -n 's/^CPU: \(.*\); bf16 unit: \(.*\)$/cpu\t\1\ncpu bf16 unit\t\2/p' >> "$out/environment.tsv"

# Why a point cannot run on this host ("" when it can): its overrides and ranks.
gpu_reason() {
  local ranks=$1 overrides=$2
  if [[ "$overrides" == *distributed.backend=nccl* ]] && [ "$ngpus" -lt "$ranks" ]; then
    echo "NCCL needs one GPU per rank ($ranks ranks, $ngpus GPUs here): not run on this host"
  elif [[ "$overrides" == *precision.dtype=fp16* ]] && [ "$ngpus" -eq 0 ]; then
    echo "fp16 needs a CUDA device: not run on this host (bf16 autocasts on the CPU too)"
  elif [[ "$overrides" =~ (model\.conv_relu=fused|train\.device=cuda) ]] && [ "$ngpus" -eq 0 ]; then
    echo "${BASH_REMATCH[1]} needs a CUDA device: not run on this host"
  fi
}

# launch LABEL NAME RANKS CONFIG DIR LOG [--set ...]: one run into DIR/NAME.h5 with its output in LOG,
# skipped when that file exists; a failed run stops the script with the log's last lines.
launch() {
  local label=$1 name=$2 ranks=$3 config=$4 dir=$5 log=$6
  shift 6
  [ ! -f "$dir/$name.h5" ] || { echo "$label: done earlier"; return 0; }
  echo "$label: training on $ranks rank(s)"
  # shellcheck disable=SC2086
  if ! $launcher -n "$ranks" "$bin" train --config "$config" "$@" --set "output.dir=$dir" \
      --set "output.name=$name" < /dev/null > "$log" 2>&1; then
    echo "coursework.sh: $label failed; last lines of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
}

# train NAME RANKS CONFIG [--set ...]: one run into OUT/results/NAME.h5.
train() {
  local name=$1 ranks=$2 config=$3
  shift 3
  launch "$name" "$name" "$ranks" "$config" "$out/results" "$out/logs/$name.log" "$@"
}

# sweep STEM [--set ...]: plans configs/coursework/STEM.yaml into OUT/sweeps/STEM with `fusetrain sweep`
# and trains its points; points this host cannot run are listed in skipped.tsv with the reason.
sweep() {
  local stem=$1 dir=$out/sweeps/$1 index name ranks config results reason
  shift
  "$bin" sweep "$configs/$stem.yaml" --out "$dir" "$@" > "$out/logs/sweep-$stem.log"
  while IFS=$'\t' read -r index name ranks config results rest <&3; do
    [[ "$index" == "#"* ]] && continue
    reason=$(gpu_reason "$ranks" "$rest")
    if [ -n "$reason" ]; then
      printf '%s\t%s\t%s\n' "$stem" "$name" "$reason" >> "$skipped"
      continue
    fi
    local sets=()
    if [ -n "$rest" ]; then
      IFS=$'\t' read -r -a overrides <<< "$rest"
      for o in "${overrides[@]}"; do sets+=(--set "$o"); done
    fi
    launch "$stem/$name" "$name" "$ranks" "$config" "$results" "$dir/logs/$name.log" ${sets[@]+"${sets[@]}"}
  done 3< "$dir/points.tsv"
}

# Smoke mode's overfitting study must really overfit within seconds: 48 training images in one full batch (the
# same step every epoch, so no shuffling noise) and Adam at lr 2e-3 memorise them by epoch ~20, after which the
# test loss climbs while the train loss keeps falling (flagged at epochs 17-23 with seeds 42, 1 and 7, under
# default and AVX2-only CPU kernels alike). Full mode keeps the config as written.
q2a=()
[ "$mode" = full ] || q2a=(--set data.limit_train=48 --set data.batch_size=48 --set optimizer.name=adam
                           --set optimizer.lr=0.002 --set optimizer.momentum=0 --set train.epochs=40)
# Q1's run names say what the ranks ran on: a GPU each, two ranks sharing one GPU, or CPU processes.
if [ "$ngpus" -eq 0 ]; then q1a=q1a_one_cpu_process q1b=q1b_two_cpu_processes
elif [ "$ngpus" -eq 1 ]; then q1a=q1a_one_gpu q1b=q1b_two_ranks_one_gpu
else q1a=q1a_one_gpu q1b=q1b_two_gpus; fi
train "$q1a" 1 "$configs/q1a_one_gpu.yaml" "${common[@]}" "${backend[@]}"
train "$q1b" 2 "$configs/q1b_two_gpus.yaml" "${common[@]}" "${backend[@]}"
# Q1a and Q1b again with distributed.reproducible (each step 2 micro-batches of the batch size in the global
# order, summed exactly): one rank and two end with the same weights, which the report checks by digest.
reproducible=(--set distributed.reproducible=true --set distributed.micro_batches=2 --set data.shuffle=global
              --set train.threads=1)
train q1r_one_rank 1 "$configs/q1a_one_gpu.yaml" "${common[@]}" "${backend[@]}" "${reproducible[@]}"
train q1r_two_ranks 2 "$configs/q1b_two_gpus.yaml" "${common[@]}" "${backend[@]}" "${reproducible[@]}"
train q2a_overfitting 1 "$configs/q2a_overfitting.yaml" "${common[@]}" "${backend[@]}" "${q2a[@]}"
for stem in q2b_precision q2c_regularization batch_size grad_accumulation optimizers last_batch; do
  sweep "$stem" "${common[@]}" "${backend[@]}"
done
sweep q2d_backends "${common[@]}"
# The conv+ReLU study: each point names its own train.device (fusetrain sweep refuses a --set of a swept
# key), so the smoke's train.device=cpu is left out; the CPU point runs anywhere, the rest need a GPU.
conv_common=()
for ((i = 0; i < ${#common[@]}; i += 2)); do
  [ "${common[i + 1]}" = train.device=cpu ] || conv_common+=("${common[i]}" "${common[i + 1]}")
done
# Smoke mode: 512 images keep its batch of 128 at 4 steps per epoch and the 10-layer CPU point short.
[ "$mode" = full ] || conv_common+=(--set data.limit_train=512)
for stem in conv_relu_2_layers conv_relu_10_layers; do
  sweep "$stem" "${conv_common[@]}" "${backend[@]}"
done
sweep adamw_recipe "${common[@]}" "${backend[@]}"

# The batch-size table's predicted column: the link between two ranks of this host swept with the backend the
# runs use, then `fusetrain plan` for 1 node x 2 ranks from each one-rank point's results file.
plan_batch_sizes() {
  local dir=$out/sweeps/batch_size index name ranks config results rest link=$out/plan/link.json
  local sweep_args=(--device cpu --backend gloo)
  [ "$ngpus" -lt 2 ] || sweep_args=(--device cuda --backend nccl)
  mkdir -p "$out/plan"
  if [ ! -f "$link" ]; then
    # shellcheck disable=SC2086
    $launcher -n 2 "$bin" bench allreduce --sweep --level intra --fit "$link" --iterations 5 "${sweep_args[@]}" \
      < /dev/null > "$out/logs/plan-link.log" 2>&1 || { tail -n 20 "$out/logs/plan-link.log" >&2; exit 1; }
  fi
  while IFS=$'\t' read -r index name ranks config results rest <&3; do
    [[ "$index" != "#"* ]] && [ "$ranks" = 1 ] && [ -f "$results/$name.h5" ] || continue
    "$bin" plan --results "$results/$name.h5" --link "$link" --topology 1x2 --allreduce flat \
      --json "$out/plan/$name.json" > "$out/logs/plan-$name.log" 2>&1 || { tail -n 20 "$out/logs/plan-$name.log" >&2; exit 1; }
  done 3< "$dir/points.tsv"
}
[ ! -f "$out/sweeps/batch_size/points.tsv" ] || plan_batch_sizes

# The last batch under BatchNorm (the article: a tiny last batch gives NaN or garbage): a network with BatchNorm
# after its hidden linear layer on 2 ranks whose slices hold 16 x 8 + 1 = 129 images, so the last batch of 16
# would hold one image. fusetrain only drops or pads it (data.remainder: drop | pad), so the third run trains
# on batches of that one image from the start: its outcome (LibTorch's refusal, a NaN loss, or "trained") goes
# to OUT/last_batch_bn/batch1.txt instead of stopping the script.
bn_dir=$out/last_batch_bn
bn_layers='[{type: conv, out: 16, kernel: 3}, {type: bn}, relu, {type: maxpool, kernel: 2, stride: 2}, '
bn_layers+='{type: linear, out: 64}, {type: bn}, relu, {type: linear, out: 0}]'
bn=(--set model.name=conv_stack --set "model.layers=$bn_layers" --set data.batch_size=16 --set data.limit_train=258
    --set train.epochs=2 --set output.save_model=false)
mkdir -p "$bn_dir/results" "$bn_dir/logs"
for policy in drop pad; do
  launch "last batch under BatchNorm, $policy" "bn-$policy" 2 "$configs/q1b_two_gpus.yaml" "$bn_dir/results" \
    "$bn_dir/logs/bn-$policy.log" "${common[@]}" "${backend[@]}" "${bn[@]}" --set "data.remainder=$policy"
done
if [ -s "$bn_dir/batch1.txt" ]; then echo "last batch under BatchNorm, batch 1: done earlier"; else
  echo "last batch under BatchNorm, batch 1: training on 1 rank(s)"
  # shellcheck disable=SC2086
  if $launcher -n 1 "$bin" train --config "$configs/q1a_one_gpu.yaml" "${common[@]}" "${backend[@]}" "${bn[@]}" \
      --set data.batch_size=1 --set data.limit_train=64 --set train.epochs=1 --set "output.dir=$bn_dir/results" \
      --set output.name=bn-batch1 < /dev/null > "$bn_dir/logs/bn-batch1.log" 2>&1; then
    if grep -qi "nan" "$bn_dir/logs/bn-batch1.log"; then echo "trained, NaN loss" > "$bn_dir/batch1.txt"
    else echo "trained (no error, no NaN)" > "$bn_dir/batch1.txt"; fi
  else
    { grep -m1 "error:" "$bn_dir/logs/bn-batch1.log" || tail -n 1 "$bn_dir/logs/bn-batch1.log"; } |
      sed 's/^.*error: /failed: /' > "$bn_dir/batch1.txt"
  fi
fi

# The largest batch that fits on rank 0's device (`fusetrain bench batch-size` doubles the batch from 16, the
# article's smallest recommended batch, until out of memory or the ceiling) into OUT/batch_size_limit.md: full
# mode the article's ResNet-18 at 224x224; smoke mode the coursework network on the data's images, 16..128 on
# the CPU, a few steps.
limit_md=$out/batch_size_limit.md
if [ -s "$limit_md" ]; then echo "batch limit: done earlier"; else
  echo "batch limit: fusetrain bench batch-size"
  shards=("$data"/train-*.h5)  # synthetic images shaped like the data set's: CxHxW from "/images [N, H, W, C]"
  image=$("$bin" inspect "${shards[0]}" | sed -n 's|^/images \[[0-9]*, \([0-9]*\), \([0-9]*\), \([0-9]*\)\]$|\3x\1x\2|p')
  limit_args=(--model resnet18 --image 3x224x224 --start 16)  # the ceiling is the command's (65536 on a GPU)
  [ "$mode" = full ] || limit_args=(--model simple_cnn --image "${image:-3x32x32}" --start 16 --device cpu
                                    --max-batch 128 --steps 2 --warmup 1)
  "$bin" bench batch-size "${limit_args[@]}" > "$limit_md.part" 2> "$out/logs/batch_size_limit.log" ||
    { tail -n 20 "$out/logs/batch_size_limit.log" >&2; exit 1; }
  mv "$limit_md.part" "$limit_md"
fi

# profile BATCH: a short Q1a run at BATCH images (6 steps per epoch, the last batch padded so a batch larger than
# the data set still runs) with the article's profiler schedule (wait 1 step, warm-up 1, active 3; memory
# profiling is always on; the article's repeat 2 has no fusetrain setting: one cycle) written as a Chrome trace
# to OUT/profiles/batch-BATCH.json; a failed run is listed in skipped.tsv instead of stopping the script.
profile() {
  local b=$1 epochs=1
  [ "$mode" = smoke ] || epochs=3  # a batch as large as the data set takes one step per epoch
  ( launch "profile batch $b" "batch-$b" 1 "$configs/q1a_one_gpu.yaml" "$out/profiles" "$out/logs/profile-batch-$b.log" \
      "${common[@]}" "${backend[@]}" --set "data.batch_size=$b" --set "data.limit_train=$((6 * b))" \
      --set data.remainder=pad --set "train.epochs=$epochs" --set profile.wait=1 --set profile.warmup=1 \
      --set profile.active=3 --set "profile.trace=$out/profiles/batch-$b.json" --set output.save_model=false ) ||
    printf 'batch_limit\tbatch-%s\tthe profiled run failed (see logs/profile-batch-%s.log)\n' "$b" "$b" >> "$skipped"
}
mkdir -p "$out/profiles"
smallest=$(sed -n '/^| [0-9][0-9]* | [0-9.]* |/{s/^| \([0-9]*\) .*/\1/p;q;}' "$limit_md")
largest=$(sed -n 's/^largest batch that fits: \([0-9][0-9]*\).*/\1/p' "$limit_md")
if [ -z "$smallest" ] || [ "${largest:-0}" -eq 0 ]; then
  printf 'batch_limit\tprofiles\tno batch size fits on this device (see batch_size_limit.md)\n' >> "$skipped"
else
  profile "$smallest"
  [ "$largest" -eq "$smallest" ] || profile "$largest"
fi

if [ -f "$out/launchers/launchers.tsv" ]; then echo "launchers: done earlier"; else
echo "launchers: one process, mpirun and srun"
mpirun=$launcher srun=${SRUN:-srun --mpi=pmix}
if [[ "$launcher" == srun* ]]; then mpirun=$default_launcher srun=$launcher; fi
MPIRUN=$mpirun SRUN=$srun FUSETRAIN_BIN=$bin \
  "$root/tools/bench/launchers.sh" "$configs/q1b_two_gpus.yaml" "$out/launchers" "${common[@]}" "${backend[@]}" \
  > "$out/logs/launchers.log" 2>&1 || { tail -n 20 "$out/logs/launchers.log" >&2; exit 1; }
fi

echo "kernels: fusetrain bench kernels"
kernel_args=()
[ "$mode" = full ] || kernel_args=(--batch 8 --channels 8 --out-channels 16 --size 16 --iterations 3 --warmup 1)
"$bin" bench kernels "${kernel_args[@]}" > "$out/kernels.md" 2> "$out/logs/kernels.log" ||
  { tail -n 20 "$out/logs/kernels.log" >&2; exit 1; }
echo "RGB to gray: fusetrain bench gray"
# Smoke mode's data is gray (Fashion-MNIST): the study takes 20 colour CIFAR-10 images (2 per class and split)
# from the shared archive when it is there, so its samples show colour.
cifar_jpg=$root/../shared/data/cifar10-jpg.tar.xz
if [ -z "$gray_data" ] && [ "$mode" = smoke ] && [ -f "$cifar_jpg" ]; then
  gray_data=$out/gray-data
  if [ ! -f "$gray_data/train-00000-of-00001.h5" ]; then
    rm -rf "$out/gray-src" && mkdir -p "$out/gray-src"
    tar -xJf "$cifar_jpg" -C "$out/gray-src" --wildcards 'cifar10-jpg/*/*/000[01].jpg'
    "$prep" --format folder --input "$out/gray-src/cifar10-jpg" --output "$gray_data" --limit 20 --name cifar10 \
      > "$out/logs/gray-data.log" 2>&1 || { tail -n 20 "$out/logs/gray-data.log" >&2; exit 1; }
    rm -rf "$out/gray-src"
  fi
fi
gray_data=${gray_data:-$data}
printf 'gray data\t%s (train split)\n' "$gray_data" >> "$out/environment.tsv"
gray_args=(--split train --python "$python" --python-loop "$root/tools/bench/gray_python_loop.py" --out "$out/kernels")
# The smoke's Python loop indexes torch tensors pixel by pixel (~20 us each): 4 images of 96x96 keep it
# near a second, and the sample PNGs over 1 kB each. Full mode: the defaults, 200 images at 128x128.
[ "$mode" = full ] || gray_args+=(--images 4 --size 96 --iterations 3 --warmup 1)
{ echo; "$bin" bench gray --data "$gray_data" "${gray_args[@]}"; } >> "$out/kernels.md" \
  2> "$out/logs/gray.log" || { tail -n 20 "$out/logs/gray.log" >&2; exit 1; }

"$python" "$root/tools/report/coursework.py" "$out"
