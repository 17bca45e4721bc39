# The airbench94-style CIFAR-10 speed recipe written in plain PyTorch: the baseline that fusetrain's
# fast_cifar model (configs/fast/cifar10.yaml) is compared against on the same device and the same shards.
"""Usage: python tools/bench/fast_cifar_pytorch.py --data DIR [options]

Trains the fast_cifar network from fusetrain-prep shards (train-*-of-*.h5, test-*-of-*.h5, read with
pytorch_baseline.read_split) and reports test accuracy and training time, once per seed. The defaults
are those of configs/fast/cifar10.yaml, so the two train the same recipe.

Data      the train split uploaded once to the device as uint8 and normalised there with the shards'
          mean/std; channels_last; autocast fp16 on CUDA (with a GradScaler; --precision bf16|fp32),
          fp32 on the CPU. Each epoch is an on-device permutation; the last partial batch is dropped.
Augment   per image, on the device: a translation by [-2, 2] pixels in each direction with reflect
          padding (a random crop of the 2-pixel reflect-padded image) and alternating flips: in the
          first epoch each image is flipped with probability 1/2, in every later epoch an image is
          flipped exactly when it was not flipped in the epoch before.
Model     fusetrain's fast_cifar as its PyTorch twin (tools/pytorch_twins/fast_cifar.py, the same parameter
          names), width w (--width, default 64), C input channels, K classes:
            whiten   Conv2d(C, 8C, 2, no padding, bias starting at 0); the weight is frozen and fitted
                     to the data: the 2x2 patch vectors (C*4 values, unfold order) of the first
                     min(5000, N) normalised training images, their second moment S = P^T P / #patches
                     (uncentred; the data are normalised, so it is close to their covariance),
                     S = V diag(lambda) V^T with the eigenvalues in descending order, W = V^T scaled
                     row by row by 1 / sqrt(lambda + 5e-4), weight = [W; -W]; then GELU
            3 groups of widths (w, 4w, 4w): conv3x3 (pad 1, no bias) -> MaxPool2d(2) -> BatchNorm2d
                     -> GELU -> conv3x3 -> BatchNorm2d -> GELU. Batch norm: eps 1e-12, PyTorch momentum
                     0.4 (airbench's momentum 0.6 is the fraction of the running statistics kept), the
                     weight fixed at 1 (not trained), the bias trained. Both convs start with their
                     first min(out, in) filters as identities (dirac), the rest default-initialised
            fc       global max pool (amax over H, W), Linear(4w, K, bias=False), logits * 1/9
          Accepts any input size from 16x16 up (32x32x3 CIFAR, 28x28x1 Fashion-MNIST, ...), as fusetrain does.
Train     Nesterov SGD, momentum 0.85, cross-entropy with --label-smoothing 0.2 (batch mean), three
          parameter groups: BatchNorm biases (lr L*S, weight decay W/S, S = --norm-bias-lr-scale 64),
          the whitening bias (lr L, decay W; its learning rate is 0 after --whiten-bias-epochs 3, 0 =
          trains throughout) and all other trainable parameters (lr L, decay W); L = --lr 1.5 and
          W = --wd 0.0013305 (airbench94's values for a mean rather than summed loss). Per-step
          LambdaLR factor: linear from --warmup-start 0.2 at step 0 to 1 at step R = max(1, int(0.23 T)),
          then linear to 0.07 at the last step T-1 (T = steps per epoch x --epochs).
Lookahead every --lookahead-every 5 steps (0 = off): a slow copy of every float parameter and buffer
          (BatchNorm running statistics included) is pulled towards the model, slow = d slow +
          (1 - d) fast with d = 0.95^5 (t/T)^3 after step t (1-based), and the model takes the slow
          values; after the last step the model takes the slow values once more (d = 1).
Evaluate  --tta none|flip|flip_translate (default flip_translate), BatchNorm running statistics,
          batches of 2000: flip averages the logits of each test image and its mirror image;
          flip_translate weights that pair 0.5 and adds, at 0.25 each, the flip-averaged logits of the
          image translated by one pixel both ways (reflect-pad 1, crops at (0,0) and (2,2)).
Timing    the training loop of one seed: every epoch's permutation, batch assembly, steps and lookahead
          pulls. Model construction, the whitening fit (done before the loop, as fusetrain does), the
          data upload and evaluation are excluded. CUDA events on a GPU, perf_counter after
          synchronising on the CPU. With --compile (default on CUDA, off on the CPU) a few untimed steps
          on a throw-away model compile the training step first, so no seed's time includes compilation.

--seeds N trains N models in one process, seed k = --seed + k, and prints per seed one line
    fast_cifar seed=S test_acc=A train_s=T epochs=E batch=B device=D precision=P tta=... compile=0|1
then a summary line (fast_cifar_summary seeds=N test_acc_mean/min/max=... train_s_mean/min/max=...
device_name=...) and one line for people. --limit-train N / --limit-test N keep the first N images of a
split (fusetrain-prep interleaves the classes, so a prefix is balanced) for quick runs.

Examples:
    python3 tools/bench/fast_cifar_pytorch.py --data data/cifar10 --seeds 5
    python3 tools/bench/fast_cifar_pytorch.py --data data/fashion-mnist --device cpu --epochs 2 \\
        --batch-size 256 --limit-train 2048 --limit-test 1000
"""
from __future__ import annotations

import argparse
import dataclasses
import pathlib
import statistics
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from pytorch_baseline import DeviceSplit, Split, Timer, device_name, read_split, reflect  # noqa: E402
from pytorch_twins import FastCifar  # noqa: E402

TRANSLATE = 2             # training translation, pixels each way
WHITEN_IMAGES = 5000      # images whose 2x2 patches fit the whitening layer
MOMENTUM = 0.85
WARMUP_FRACTION = 0.23
FINAL_LR_FACTOR = 0.07
EVAL_BATCH = 2000
LOOKAHEAD_BASE = 0.95 ** 5
COMPILE_WARMUP_STEPS = 3


def translated_flipped(data: DeviceSplit, index: torch.Tensor, flip: torch.Tensor) -> torch.Tensor:
    """Normalised images `index`, each translated by [-2, 2] pixels per axis with reflect padding and
    mirrored where `flip` (bool, one per image) is set, gathered in one indexing operation."""
    span = 2 * TRANSLATE + 1
    dy = torch.randint(0, span, (len(index), 1), device=index.device) - TRANSLATE
    dx = torch.randint(0, span, (len(index), 1), device=index.device) - TRANSLATE
    rows = reflect(data.rows + dy, data.height)
    cols = reflect(torch.where(flip[:, None], data.cols.flip(0), data.cols) + dx, data.width)
    return data.normalise(data.images[index[:, None, None], rows[:, :, None], cols[:, None, :]])


def lr_factor(step: int, total: int, start: float) -> float:
    """Linear warm-up from `start` over the first 23% of the steps, then linear decay to 0.07 at the last step."""
    rise = max(1, int(WARMUP_FRACTION * total))
    if step < rise:
        return start + (1 - start) * step / rise
    return 1 + (FINAL_LR_FACTOR - 1) * min(1.0, (step - rise) / max(1, total - 1 - rise))


class Lookahead:
    """A slow copy of the model's float parameters and buffers that the model is pulled back to."""

    def __init__(self, model: nn.Module):
        self.fast = [t for t in model.state_dict().values() if t.is_floating_point()]
        self.slow = [t.detach().clone() for t in self.fast]

    @torch.no_grad()
    def update(self, decay: float) -> None:
        torch._foreach_lerp_(self.slow, self.fast, 1 - decay)
        torch._foreach_copy_(self.fast, self.slow)


@dataclasses.dataclass
class Result:
    seed: int
    test_acc: float
    train_s: float
    train_loss: float


class Trainer:
    def __init__(self, train: Split, test: Split, args: argparse.Namespace, device: torch.device):
        self.args, self.device = args, device
        self.data, self.test = DeviceSplit(train, device), DeviceSplit(test, device)
        self.shape, self.classes = train.images.shape[1:], train.classes
        self.steps_per_epoch = len(train.labels) // args.batch_size
        self.total_steps = self.steps_per_epoch * args.epochs
        self.dtype = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[args.precision]

    def autocast(self) -> torch.autocast:
        return torch.autocast(self.device.type, dtype=self.dtype, enabled=self.dtype is not None)

    def new_model(self) -> FastCifar:
        height, width, channels = self.shape
        model = FastCifar(channels, height, width, self.classes, self.args.width)
        return model.to(self.device, memory_format=torch.channels_last)

    def optimizer(self, model: FastCifar) -> tuple[torch.optim.SGD, torch.optim.lr_scheduler.LambdaLR]:
        args = self.args
        norm_biases = [p for name, p in model.named_parameters() if ".norm" in name and p.requires_grad]
        whiten_bias = [model.whiten.bias]
        others = [p for name, p in model.named_parameters()
                  if p.requires_grad and ".norm" not in name and name != "whiten.bias"]
        scale = args.norm_bias_lr_scale
        groups = [{"params": norm_biases, "lr": args.lr * scale, "weight_decay": args.wd / scale},
                  {"params": whiten_bias, "lr": args.lr, "weight_decay": args.wd},
                  {"params": others, "lr": args.lr, "weight_decay": args.wd}]
        optimizer = torch.optim.SGD(groups, momentum=MOMENTUM, nesterov=True,
                                    fused=True if self.device.type == "cuda" else None)
        total, whiten_steps = self.total_steps, args.whiten_bias_epochs * self.steps_per_epoch

        def factor(step: int) -> float:
            return lr_factor(step, total, args.warmup_start)

        def whiten_factor(step: int) -> float:
            return factor(step) if not whiten_steps or step < whiten_steps else 0.0

        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, [factor, whiten_factor, factor])
        return optimizer, schedule

    def compile_warmup(self) -> None:
        """Untimed steps on a throw-away model so that torch.compile has compiled forward and backward."""
        model = self.new_model()
        forward = torch.compile(model) if self.args.compile else model
        optimizer, _ = self.optimizer(model)
        scaler = torch.amp.GradScaler(self.device.type, enabled=self.args.precision == "fp16")
        index = torch.arange(self.args.batch_size, device=self.device)
        flip = torch.zeros(self.args.batch_size, dtype=torch.bool, device=self.device)
        for _ in range(COMPILE_WARMUP_STEPS):
            with self.autocast():
                loss = F.cross_entropy(forward(translated_flipped(self.data, index, flip)), self.data.labels[index],
                                       label_smoothing=self.args.label_smoothing)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def run(self, seed: int) -> Result:
        args, device = self.args, self.device
        torch.manual_seed(seed)
        model = self.new_model()
        model.fit_whitening(self.data.normalise(self.data.images[:WHITEN_IMAGES]))
        forward = torch.compile(model) if self.args.compile else model  # the model whole, whitening included
        optimizer, schedule = self.optimizer(model)
        scaler = torch.amp.GradScaler(device.type, enabled=args.precision == "fp16")
        lookahead = Lookahead(model) if args.lookahead_every else None
        count = len(self.data.labels)
        timer = Timer(device)

        timer.start()
        flipped = torch.rand(count, device=device) < 0.5
        step, loss_sum = 0, torch.zeros((), device=device)
        for epoch in range(args.epochs):
            if epoch:
                flipped = ~flipped
            order = torch.randperm(count, device=device)
            loss_sum.zero_()
            for first in range(0, self.steps_per_epoch * args.batch_size, args.batch_size):
                index = order[first:first + args.batch_size]
                x = translated_flipped(self.data, index, flipped[index])
                with self.autocast():
                    loss = F.cross_entropy(forward(x), self.data.labels[index],
                                           label_smoothing=args.label_smoothing)
                optimizer.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                schedule.step()
                step += 1
                loss_sum += loss.detach().float()
                if lookahead and step % args.lookahead_every == 0:
                    lookahead.update(LOOKAHEAD_BASE * (step / self.total_steps) ** 3)
        if lookahead:
            lookahead.update(1.0)
        train_s = timer.stop()

        return Result(seed, self.evaluate(model), train_s, loss_sum.item() / self.steps_per_epoch)

    @torch.no_grad()
    def evaluate(self, model: FastCifar) -> float:
        model.eval()
        data, correct = self.test, torch.zeros((), dtype=torch.int64, device=self.device)

        def mirrored(x: torch.Tensor) -> torch.Tensor:
            logits = model(x).float()
            if self.args.tta == "none":
                return logits
            return 0.5 * (logits + model(x.flip(3)).float())

        with self.autocast():
            for first in range(0, len(data.labels), EVAL_BATCH):
                x = data.normalise(data.images[first:first + EVAL_BATCH])
                logits = mirrored(x)
                if self.args.tta == "flip_translate":
                    height, width = x.shape[2:]
                    padded = F.pad(x, (1, 1, 1, 1), mode="reflect")
                    logits = (0.5 * logits + 0.25 * mirrored(padded[:, :, :height, :width])
                              + 0.25 * mirrored(padded[:, :, 2:, 2:]))
                correct += (logits.argmax(1) == data.labels[first:first + EVAL_BATCH]).sum()
        model.train()
        return correct.item() / len(data.labels)


def limited(split: Split, limit: int | None) -> Split:
    if not limit:
        return split
    return dataclasses.replace(split, images=split.images[:limit], labels=split.labels[:limit])


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=pathlib.Path, required=True, help="folder of fusetrain-prep shards")
    parser.add_argument("--width", type=int, default=64, help="channels of the first group (then 4x, 4x)")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--lr", type=float, default=1.5, help="peak learning rate L of the ordinary parameters")
    parser.add_argument("--wd", type=float, default=0.0013305, help="weight decay W of the ordinary parameters")
    parser.add_argument("--warmup-start", type=float, default=0.2,
                        help="the learning rate starts at this fraction of the peak and rises over 23%% of the steps")
    parser.add_argument("--norm-bias-lr-scale", type=float, default=64,
                        help="BatchNorm biases train at lr L*S with weight decay W/S")
    parser.add_argument("--label-smoothing", type=float, default=0.2)
    parser.add_argument("--whiten-bias-epochs", type=int, default=3,
                        help="epochs the whitening bias trains, then its lr is 0 (0 = trains throughout)")
    parser.add_argument("--lookahead-every", type=int, default=5, help="steps between lookahead pulls (0 = off)")
    parser.add_argument("--tta", choices=("none", "flip", "flip_translate"), default="flip_translate")
    parser.add_argument("--precision", choices=("fp32", "bf16", "fp16"),
                        help="autocast dtype; default fp16 on CUDA, fp32 on the CPU")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction,
                        help="torch.compile the model (default on CUDA, off on the CPU)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=1, help="train this many models, seeds --seed, --seed+1, ...")
    parser.add_argument("--limit-train", type=int, help="use only the first N training images")
    parser.add_argument("--limit-test", type=int, help="use only the first N test images")
    args = parser.parse_args()

    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda but torch sees no CUDA device")
    args.precision = args.precision or ("fp16" if args.device == "cuda" else "fp32")
    args.compile = args.device == "cuda" if args.compile is None else args.compile
    if args.precision == "fp16" and args.device != "cuda":
        parser.error("--precision fp16 needs a CUDA device")
    if min(args.width, args.epochs, args.batch_size, args.seeds) < 1:
        parser.error("--width, --epochs, --batch-size and --seeds must be positive")
    if min(args.whiten_bias_epochs, args.lookahead_every) < 0 or not 0 <= args.label_smoothing < 1:
        parser.error("--whiten-bias-epochs and --lookahead-every must not be negative, --label-smoothing in [0, 1)")
    if args.lr <= 0 or args.wd < 0 or args.norm_bias_lr_scale <= 0 or not 0 <= args.warmup_start <= 1:
        parser.error("--lr and --norm-bias-lr-scale must be positive, --wd not negative, --warmup-start in [0, 1]")
    for name in ("limit_train", "limit_test"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be positive")
    return args


def main() -> None:
    args = parse_args()
    device = torch.device(args.device)
    train = limited(read_split(args.data, "train"), args.limit_train)
    test = limited(read_split(args.data, "test"), args.limit_test)
    _, height, width, _ = train.images.shape
    if min(height, width) < 10:
        raise SystemExit(f"images of {height}x{width} are too small for three 2x max-pools after the 2x2 whitening")
    if args.batch_size > len(train.labels):
        raise SystemExit(f"--batch-size {args.batch_size} is larger than the {len(train.labels)} training images")
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True

    trainer = Trainer(train, test, args, device)
    if args.compile:
        trainer.compile_warmup()
    results = []
    for k in range(args.seeds):
        result = trainer.run(args.seed + k)
        results.append(result)
        print(f"fast_cifar seed={result.seed} test_acc={result.test_acc:.4f} train_s={result.train_s:.3f} "
              f"epochs={args.epochs} batch={args.batch_size} device={device.type} precision={args.precision} "
              f"tta={args.tta} compile={int(args.compile)}", flush=True)
        print(f"  seed {result.seed}: test accuracy {100 * result.test_acc:.2f}%, last-epoch train loss "
              f"{result.train_loss:.4f}, {result.train_s:.2f} s training", flush=True)

    accs, times = [r.test_acc for r in results], [r.train_s for r in results]
    name = device_name(device)
    print(f"fast_cifar_summary seeds={len(results)} test_acc_mean={statistics.fmean(accs):.4f} "
          f"test_acc_min={min(accs):.4f} test_acc_max={max(accs):.4f} train_s_mean={statistics.fmean(times):.3f} "
          f"train_s_min={min(times):.3f} train_s_max={max(times):.3f} epochs={args.epochs} batch={args.batch_size} "
          f"device={device.type} precision={args.precision} device_name={name.replace(' ', '_')}")
    spread = f" (sd {100 * statistics.stdev(accs):.2f})" if len(accs) > 1 else ""
    print(f"fast_cifar width {args.width}, {args.epochs} epochs, batch {args.batch_size}, {args.precision}"
          f"{', compiled' if args.compile else ''} on {name}: test accuracy {100 * statistics.fmean(accs):.2f}%"
          f"{spread} over {len(accs)} seed{'s' * (len(accs) != 1)}, {statistics.fmean(times):.2f} s training "
          f"({len(train.labels)} training images, tta {args.tta})")


if __name__ == "__main__":
    main()
