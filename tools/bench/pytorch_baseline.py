# fusetrain's training step written in PyTorch, in two styles, as the peer that fusetrain's numbers are
# compared against: the coursework's DataLoader script and a tuned, fully device-resident loop.
"""Usage: python tools/bench/pytorch_baseline.py --style coursework|tuned (--data DIR | --synthetic) [options]

coursework  torch.utils.data.Dataset over the split (read from the HDF5 shards with h5py and held in RAM,
            like torchvision's CIFAR10), a DataLoader with --workers processes, per-sample CPU transforms
            with torch ops (reflect-pad 4 + random 32x32 crop, horizontal flip, normalise with the shard's
            mean/std), NCHW fp32 eager training and loss.item() every step (one host sync per step).
tuned       the split uploaded once to the device as uint8, an on-device permutation per epoch, batch
            assembly as one gather that translates by [-4, 4] with reflect padding and flips (torch.where
            on the column indices), normalisation on the device, channels_last (--no-channels-last: NCHW
            images and weights), autocast bf16 (or fp16 with a GradScaler, or fp32), torch.compile
            (default on CUDA), cudnn.benchmark, fused SGD on CUDA.

Both train simple_cnn or resnet18 (pytorch_models.py) with SGD (momentum 0.9, Nesterov, --lr) and
cross-entropy, dropping each epoch's last partial batch. --data reads fusetrain-prep shards
(train-*-of-*.h5, test-*-of-*.h5); --synthetic makes random uint8 32x32x3 images for pure throughput.

Steps mode (default): --warmup untimed steps, then --steps timed ones (CUDA events on a GPU, perf_counter
after synchronising on the CPU); the time covers batch assembly, forward, backward and the optimizer, and
images/s = batch x steps / seconds, the definition of `fusetrain bench step`. --fixed-batch reuses one
device-resident batch instead (no data loading or augmentation), which is what `fusetrain bench step`
measures. Epochs mode (--epochs E, needs --data): E full epochs, test loss and accuracy after each, and
images/s over the training time (the first epoch includes torch.compile's compilation).
--threads N sets torch.set_num_threads(N) (default: torch's own choice; torchrun sets OMP_NUM_THREADS=1).

--ddp (tuned style, CPU): data parallel across processes, started as
    torchrun --nproc-per-node N tools/bench/pytorch_baseline.py --style tuned --ddp --device cpu ...
Each rank joins a gloo process group from torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT), wraps the model in DistributedDataParallel (default bucket settings) and trains on its own
data: rank r of N keeps shards' images r, r+N, r+2N, ..., or its own --synthetic-images / N random images
(seed + r). --batch-size is per rank, as `fusetrain bench step --batch`. Timing is that of
`fusetrain bench step` at N ranks: after the warm-up every rank waits at a barrier, times its --steps
itself, and the slowest rank's seconds count: images/s = N x batch x steps / max over ranks of seconds.
In epochs mode every rank trains its share for E epochs and rank 0 scores the whole test split (DDP keeps
rank 0's BatchNorm statistics on every rank: it broadcasts them before each forward).
With --ddp, --sync-batchnorm converts every BatchNorm layer with torch.nn.SyncBatchNorm.convert_sync_batchnorm
(statistics over all ranks' images; PyTorch ships its kernels for GPUs only: on the CPU
pytorch_cpu_syncbn.py registers CPU versions of them, and --device cuda runs it as shipped, ranks sharing the
host's GPUs over gloo), and --powersgd-rank R registers DDP's powerSGD_hook (PowerSGDState with
matrix_approximation_rank R, start_powerSGD_iter --powersgd-start-step, its other settings at their defaults:
error feedback, warm start, min_compression_rate 2), the peers of model.sync_batchnorm and
distributed.compression powersgd.
--model-config FILE trains the twin of the `model:` section of a fusetrain config (e.g. a conv_stack with bn
layers) in place of --model; --momentum and --nesterov set SGD's (default 0.9, on).

Rank 0 prints one machine-readable line (images_per_s=X style=... model=... batch=... precision=...
device=... compile=... channels_last=0|1 world_size=N threads=T then steps/seconds or epochs/test_acc,
last device_name=...) and one line for people.
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import os
import pathlib
import re
import sys
import time
from typing import Iterator

import h5py
import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
import yaml
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powerSGD
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import pytorch_cpu_syncbn  # noqa: E402
from pytorch_models import MODELS, make_model  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from pytorch_twins import build_model  # noqa: E402

CROP_PADDING = 4
EVAL_BATCH = 500


@dataclasses.dataclass
class Split:
    images: np.ndarray  # uint8 [N, H, W, C]
    labels: np.ndarray  # int64 [N]
    mean: np.ndarray    # float32 [C], [0,1] pixel units
    std: np.ndarray     # float32 [C]
    classes: int


def read_split(directory: pathlib.Path, split: str) -> Split:
    """All shards of one split, in shard order; mean/std are the train split's (stored in every shard)."""
    paths = sorted(directory.glob(f"{split}-*-of-*.h5"))
    if not paths:
        raise SystemExit(f"{directory} has no {split}-*-of-*.h5 shards (make them with fusetrain-prep)")
    totals = {re.search(r"-of-(\d+)\.h5$", p.name).group(1) for p in paths}
    if len(totals) != 1 or int(totals.pop()) != len(paths):
        raise SystemExit(f"{directory}: incomplete or mixed {split} shard set: {[p.name for p in paths]}")
    images, labels = [], []
    for path in paths:
        with h5py.File(path, "r") as f:
            if f["images"].dtype != np.uint8 or f["images"].ndim != 4:
                raise SystemExit(f"{path}: /images must be uint8 [N,H,W,C]")
            images.append(f["images"][...])
            labels.append(f["labels"][...].astype(np.int64))
            mean, std = f.attrs["mean"].astype(np.float32), f.attrs["std"].astype(np.float32)
            classes = len(f.attrs["class_names"])
    return Split(np.concatenate(images), np.concatenate(labels), mean, std, classes)


def synthetic_split(count: int, seed: int) -> Split:
    """Uniform random 32x32x3 uint8 images and labels; mean/std are those of the uniform distribution."""
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(count, 32, 32, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, size=count, dtype=np.int64)
    std = math.sqrt((256 ** 2 - 1) / 12) / 255
    return Split(images, labels, np.full(3, 0.5, np.float32), np.full(3, std, np.float32), 10)


class ShardDataset(Dataset):
    """The coursework's per-sample pipeline: uint8 HWC -> float CHW in [0,1] -> crop, flip -> normalise."""

    def __init__(self, split: Split, train: bool):
        self.split, self.train = split, train
        self.mean = torch.from_numpy(split.mean)[:, None, None]
        self.std = torch.from_numpy(split.std)[:, None, None]

    def __len__(self) -> int:
        return len(self.split.labels)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        x = torch.from_numpy(self.split.images[i]).permute(2, 0, 1).float().div_(255)
        if self.train:
            _, height, width = x.shape
            x = F.pad(x, (CROP_PADDING,) * 4, mode="reflect")
            dy, dx = torch.randint(0, 2 * CROP_PADDING + 1, (2,)).tolist()
            x = x[:, dy:dy + height, dx:dx + width]
            if torch.rand(()) < 0.5:
                x = x.flip(2)
        return (x - self.mean) / self.std, int(self.split.labels[i])


class Coursework:
    """DataLoader + per-sample CPU transforms, eager NCHW fp32, the loss read back every step."""

    def __init__(self, model: torch.nn.Module, train: Split, args: argparse.Namespace, device: torch.device):
        self.model, self.device, self.workers = model, device, args.workers
        self.optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                                         nesterov=args.nesterov)
        self.loader = DataLoader(ShardDataset(train, train=True), batch_size=args.batch_size, shuffle=True,
                                 drop_last=True, num_workers=args.workers)

    def epoch(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        return iter(self.loader)

    def step(self, x: torch.Tensor, y: torch.Tensor) -> float:
        x, y = x.to(self.device), y.to(self.device)
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def evaluate(self, test: Split) -> tuple[float, float]:
        self.model.eval()
        loss_sum, correct = 0.0, 0
        with torch.no_grad():
            for x, y in DataLoader(ShardDataset(test, train=False), batch_size=EVAL_BATCH,
                                   num_workers=self.workers):
                logits = self.model(x.to(self.device))
                y = y.to(self.device)
                loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
                correct += (logits.argmax(1) == y).sum().item()
        self.model.train()
        return loss_sum / len(test.labels), correct / len(test.labels)


class DeviceSplit:
    """A split resident on the device as uint8 NHWC, and the batch assembly that reads it."""

    def __init__(self, split: Split, device: torch.device, channels_last: bool = True):
        self.channels_last = channels_last
        self.images = torch.from_numpy(split.images).to(device)
        self.labels = torch.from_numpy(split.labels).to(device)
        self.height, self.width = split.images.shape[1:3]
        # (x / 255 - mean) / std as one multiply-add, per channel, broadcast over NCHW.
        self.scale = torch.from_numpy(1 / (255 * split.std)).to(device)[None, :, None, None]
        self.shift = torch.from_numpy(-split.mean / split.std).to(device)[None, :, None, None]
        self.rows = torch.arange(self.height, device=device)
        self.cols = torch.arange(self.width, device=device)

    def normalise(self, nhwc: torch.Tensor) -> torch.Tensor:
        """uint8 NHWC -> float NCHW with channels_last memory (the permute is a view of NHWC storage), or
        contiguous NCHW memory when the split was made with channels_last=False."""
        x = nhwc.permute(0, 3, 1, 2).mul(self.scale).add_(self.shift)
        return x if self.channels_last else x.contiguous()

    def augmented(self, index: torch.Tensor) -> torch.Tensor:
        """Images `index`, each translated by [-4, 4] pixels with reflect padding and flipped with
        probability 1/2, in one gather: the row and column indices of each sample are shifted, reflected
        at the borders and, for a flip, reversed."""
        batch, span = len(index), 2 * CROP_PADDING + 1
        dy = torch.randint(0, span, (batch, 1), device=index.device) - CROP_PADDING
        dx = torch.randint(0, span, (batch, 1), device=index.device) - CROP_PADDING
        flip = torch.rand(batch, 1, device=index.device) < 0.5
        rows = reflect(self.rows + dy, self.height)
        cols = reflect(torch.where(flip, self.cols.flip(0), self.cols) + dx, self.width)
        return self.normalise(self.images[index[:, None, None], rows[:, :, None], cols[:, None, :]])


def distributed(model: torch.nn.Module, args: argparse.Namespace) -> DistributedDataParallel:
    """The model in DDP (its BatchNorm layers converted in place with --sync-batchnorm, whose statistics then
    span all ranks), with DDP's powerSGD_hook registered when --powersgd-rank is set. The hook then gets every
    gradient in one bucket: over gloo, its chained all-reduces of several buckets run on gloo's worker threads in
    an order that differs between ranks, and the ranks' collectives stop matching ("Received data size doesn't
    match expected size"), as seen with simple_cnn's two buckets."""
    if args.powersgd_rank:
        dist._DEFAULT_FIRST_BUCKET_BYTES = 1 << 40
    ddp = DistributedDataParallel(model, bucket_cap_mb=1 << 20 if args.powersgd_rank else None)
    if args.powersgd_rank:
        state = powerSGD.PowerSGDState(process_group=None, matrix_approximation_rank=args.powersgd_rank,
                                       start_powerSGD_iter=args.powersgd_start_step, random_seed=args.seed)
        ddp.register_comm_hook(state, powerSGD.powerSGD_hook)
    return ddp


def reflect(i: torch.Tensor, n: int) -> torch.Tensor:
    """Index i in [-(n-1), 2(n-1)] mirrored into [0, n) without repeating the edge (padding mode reflect)."""
    i = i.abs()
    return torch.where(i >= n, 2 * (n - 1) - i, i)


class Tuned:
    """Device-resident data, batched on-device augmentation, channels_last, autocast, torch.compile;
    with --ddp the model trains wrapped in DistributedDataParallel."""

    def __init__(self, model: torch.nn.Module, train: Split, args: argparse.Namespace, device: torch.device):
        self.model = model.to(memory_format=torch.channels_last) if args.channels_last else model
        step_model = distributed(self.model, args) if args.ddp else self.model
        self.step_model = torch.compile(step_model) if args.compile else step_model
        self.batch, self.device = args.batch_size, device
        self.data = DeviceSplit(train, device, args.channels_last)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                                         nesterov=args.nesterov, fused=True if device.type == "cuda" else None)
        self.dtype = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[args.precision]
        self.scaler = torch.amp.GradScaler(device.type, enabled=args.precision == "fp16")

    def autocast(self) -> torch.autocast:
        return torch.autocast(self.device.type, dtype=self.dtype, enabled=self.dtype is not None)

    def epoch(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        order = torch.randperm(len(self.data.labels), device=self.device)
        for first in range(0, len(order) - self.batch + 1, self.batch):
            index = order[first:first + self.batch]
            yield self.data.augmented(index), self.data.labels[index]

    def step(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        self.optimizer.zero_grad(set_to_none=True)
        with self.autocast():
            loss = F.cross_entropy(self.step_model(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.detach()

    def evaluate(self, test: Split) -> tuple[float, float]:
        data = DeviceSplit(test, self.device, self.data.channels_last)
        self.model.eval()
        loss_sum = torch.zeros((), device=self.device)
        correct = torch.zeros((), device=self.device, dtype=torch.int64)
        with torch.no_grad(), self.autocast():
            for first in range(0, len(data.labels), EVAL_BATCH):
                logits = self.model(data.normalise(data.images[first:first + EVAL_BATCH])).float()
                y = data.labels[first:first + EVAL_BATCH]
                loss_sum += F.cross_entropy(logits, y, reduction="sum")
                correct += (logits.argmax(1) == y).sum()
        self.model.train()
        return loss_sum.item() / len(test.labels), correct.item() / len(test.labels)


class Timer:
    """Seconds between start() and stop(): CUDA events on a GPU, perf_counter after synchronising elsewhere."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"

    def start(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()
            self.begin = torch.cuda.Event(enable_timing=True)
            self.begin.record()
        else:
            self.begin = time.perf_counter()

    def stop(self) -> float:
        if self.cuda:
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            end.synchronize()
            return self.begin.elapsed_time(end) / 1000
        return time.perf_counter() - self.begin


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    cpu = re.search(r"^model name\s*:\s*(.+)$", pathlib.Path("/proc/cpuinfo").read_text(), re.M)
    return f"{cpu.group(1) if cpu else 'CPU'} ({torch.get_num_threads()} threads)"


@dataclasses.dataclass
class World:
    """This process's place among the --ddp ranks; rank 0 of 1 without --ddp."""
    rank: int = 0
    size: int = 1

    def barrier(self) -> None:
        if dist.is_initialized():
            dist.barrier()

    def slowest(self, seconds: float) -> float:
        """The largest of every rank's `seconds` (the time of the slowest rank)."""
        if not dist.is_initialized():
            return seconds
        value = torch.tensor(seconds, dtype=torch.float64)
        dist.all_reduce(value, op=dist.ReduceOp.MAX)
        return value.item()


TORCHRUN_ENV = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def join_world(args: argparse.Namespace) -> World:
    """With --ddp, join the gloo process group that torchrun's environment describes."""
    if not args.ddp:
        return World()
    dist.init_process_group("gloo")
    return World(dist.get_rank(), dist.get_world_size())


def rank_split(args: argparse.Namespace, world: World) -> Split:
    """This rank's training data: every world.size-th image of the shards from image world.rank on, or its
    own share of --synthetic-images random images (seed + rank)."""
    if not args.data:
        return synthetic_split(args.synthetic_images // world.size, args.seed + world.rank)
    split = read_split(args.data, "train")
    if world.size == 1:
        return split
    return dataclasses.replace(split, images=np.ascontiguousarray(split.images[world.rank::world.size]),
                               labels=np.ascontiguousarray(split.labels[world.rank::world.size]))


def endless(style: Coursework | Tuned) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    while True:
        yield from style.epoch()


def run_steps(style: Coursework | Tuned, args: argparse.Namespace, timer: Timer, world: World) -> dict[str, str]:
    """Warm-up, a barrier, the timed steps; images/s over the slowest rank's time, as fusetrain bench step."""
    if args.fixed_batch:
        x, y = next(style.epoch())
        batches = itertools.repeat((x.to(style.device), y.to(style.device)))
    else:
        batches = endless(style)
    for _ in range(args.warmup):
        style.step(*next(batches))
    world.barrier()
    timer.start()
    for _ in range(args.steps):
        style.step(*next(batches))
    seconds = world.slowest(timer.stop())
    images = world.size * args.batch_size * args.steps
    return {"images_per_s": f"{images / seconds:.1f}", "steps": str(args.steps), "seconds": f"{seconds:.4f}"}


def run_epochs(style: Coursework | Tuned, args: argparse.Namespace, timer: Timer, test: Split,
               world: World) -> dict[str, str]:
    """E epochs of every rank's share; images/s over the slowest rank's time, all ranks' images."""
    train_seconds, images = 0.0, 0
    for epoch in range(1, args.epochs + 1):
        world.barrier()
        timer.start()
        losses = [style.step(x, y) for x, y in style.epoch()]
        seconds = world.slowest(timer.stop())
        train_loss = float(sum(losses)) / len(losses)
        train_seconds += seconds
        images += len(losses) * args.batch_size * world.size
        test_loss, test_acc = style.evaluate(test)
        if world.rank == 0:
            print(f"epoch {epoch}/{args.epochs}: train loss {train_loss:.4f}, test loss {test_loss:.4f}, "
                  f"test acc {100 * test_acc:.2f}%, {seconds:.2f} s "
                  f"({len(losses) * args.batch_size * world.size / seconds:.1f} images/s)", flush=True)
    return {"images_per_s": f"{images / train_seconds:.1f}", "epochs": str(args.epochs),
            "train_s": f"{train_seconds:.3f}", "test_loss": f"{test_loss:.4f}", "test_acc": f"{test_acc:.4f}"}


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--style", choices=("coursework", "tuned"), required=True)
    parser.add_argument("--model", choices=MODELS, default="simple_cnn")
    parser.add_argument("--model-config", type=pathlib.Path,
                        help="the twin of this fusetrain config's model: section, in place of --model")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--data", type=pathlib.Path, help="folder of fusetrain-prep shards")
    source.add_argument("--synthetic", action="store_true", help="random uint8 32x32x3 images (throughput)")
    parser.add_argument("--synthetic-images", type=int, default=50_000,
                        help="size of the synthetic split (with --ddp: over all ranks together)")
    parser.add_argument("--batch-size", type=int, default=128, help="images per step (with --ddp: per rank)")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.9, help="SGD momentum")
    parser.add_argument("--nesterov", action=argparse.BooleanOptionalAction, default=True, help="Nesterov momentum")
    parser.add_argument("--steps", type=int, default=30, help="timed steps (steps mode)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps before the timed ones")
    parser.add_argument("--epochs", type=int, default=0, help="train E full epochs and evaluate (needs --data)")
    parser.add_argument("--fixed-batch", action="store_true",
                        help="time the step on one device-resident batch, like fusetrain bench step")
    parser.add_argument("--precision", choices=("fp32", "bf16", "fp16"),
                        help="tuned only; default bf16 on CUDA, fp32 on the CPU (coursework is fp32)")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction,
                        help="tuned only: torch.compile the model (default on CUDA, off on the CPU)")
    parser.add_argument("--channels-last", action=argparse.BooleanOptionalAction,
                        help="tuned only: channels_last images and weights (default on; off: NCHW, as coursework)")
    parser.add_argument("--ddp", action="store_true",
                        help="tuned, CPU: DistributedDataParallel over gloo, one rank per torchrun "
                             "process (torchrun --nproc-per-node N pytorch_baseline.py --ddp ...)")
    parser.add_argument("--sync-batchnorm", action="store_true",
                        help="with --ddp: SyncBatchNorm.convert_sync_batchnorm (statistics over all ranks)")
    parser.add_argument("--powersgd-rank", type=int, default=0,
                        help="with --ddp: DDP's powerSGD_hook at this matrix approximation rank (0 = off)")
    parser.add_argument("--powersgd-start-step", type=int, default=1000,
                        help="with --powersgd-rank: steps all-reduced uncompressed first (PyTorch needs > 1)")
    parser.add_argument("--threads", type=int, help="torch.set_num_threads per process (default: torch's)")
    parser.add_argument("--workers", type=int, default=2, help="coursework DataLoader processes")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="auto: cuda when torch sees a GPU, else cpu (with --ddp: cpu)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def check_style(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Fills in the style-dependent defaults (precision, compile, channels_last) and refuses mixtures."""
    if args.style == "coursework":
        if args.precision not in (None, "fp32") or args.compile or args.channels_last or args.ddp:
            parser.error("--precision, --compile, --channels-last and --ddp are tuned-style options "
                         "(the coursework style is eager fp32 NCHW on one process)")
        args.precision, args.compile, args.channels_last = "fp32", False, False
    else:
        args.precision = args.precision or ("bf16" if args.device == "cuda" else "fp32")
        args.compile = args.device == "cuda" if args.compile is None else args.compile
        args.channels_last = True if args.channels_last is None else args.channels_last


def check_ddp(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--ddp only under torchrun, in steps mode on the CPU; torchrun's several processes only with --ddp."""
    world_size = os.environ.get("WORLD_SIZE", "1")
    if (args.sync_batchnorm or args.powersgd_rank) and not args.ddp:
        parser.error("--sync-batchnorm and --powersgd-rank are DDP's: add --ddp (under torchrun)")
    if not args.ddp:
        if world_size != "1":
            parser.error(f"WORLD_SIZE={world_size} (started by torchrun?) but no --ddp: every process would time "
                         "its own run; pass --ddp to train data parallel")
        return
    missing = [name for name in TORCHRUN_ENV if name not in os.environ]
    if missing:
        parser.error(f"--ddp runs under torchrun, which sets {', '.join(missing)} (not set here): start it as "
                     "`torchrun --nproc-per-node N tools/bench/pytorch_baseline.py --ddp ...`")
    if args.device != "cpu" and not args.sync_batchnorm:
        parser.error("--ddp measures CPU data parallelism over gloo: use --device cpu (--device cuda only with "
                     "--sync-batchnorm, to run PyTorch's SyncBatchNorm as shipped)")


def parse_args() -> argparse.Namespace:
    parser = make_parser()
    args = parser.parse_args()
    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() and not args.ddp else "cpu"
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda but torch sees no CUDA device")
    check_style(parser, args)
    check_ddp(parser, args)
    if args.precision == "fp16" and args.device != "cuda":
        parser.error("--precision fp16 needs a CUDA device")
    if args.epochs and args.synthetic:
        parser.error("--epochs reports test accuracy and needs --data")
    if args.epochs and args.fixed_batch:
        parser.error("--fixed-batch is for steps mode, not --epochs")
    if min(args.batch_size, args.steps, args.threads or 1) < 1 or min(args.warmup, args.epochs, args.workers) < 0:
        parser.error("--batch-size, --steps and --threads must be positive; --warmup, --epochs, --workers "
                     "not negative")
    return args


def report(args: argparse.Namespace, result: dict[str, str], world: World, device: torch.device) -> None:
    """The machine-readable line and the line for people (rank 0 only)."""
    name = device_name(device)
    fields = {"images_per_s": result.pop("images_per_s"), "style": args.style, "model": args.model,
              "batch": str(args.batch_size), "precision": args.precision, "device": device.type,
              "compile": str(int(args.compile)), "channels_last": str(int(args.channels_last)),
              "world_size": str(world.size), "threads": str(torch.get_num_threads()),
              "sync_batchnorm": str(int(args.sync_batchnorm)), "powersgd_rank": str(args.powersgd_rank), **result,
              "device_name": name.replace(" ", "_")}
    print(" ".join(f"{key}={value}" for key, value in fields.items()))
    if args.epochs:
        what = f"{args.epochs} epoch{'s' * (args.epochs != 1)}"
    else:
        what = f"{args.steps} steps after {args.warmup} warm-up"
    if args.fixed_batch:
        what += ", one fixed batch"
    ranks = f", {world.size} ranks (DDP, gloo), batch per rank" if args.ddp else ""
    print(f"{args.style} {args.model}, batch {args.batch_size}{ranks}, {args.precision}"
          f"{'' if args.channels_last else ', NCHW'}{', compiled' if args.compile else ''} on {name}: "
          f"{fields['images_per_s']} images/s ({what})", flush=True)


def main() -> None:
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    world = join_world(args)
    device = torch.device(args.device)
    if device.type == "cuda" and args.ddp:  # every rank on its node's GPU local_rank mod GPUs (shared, gloo)
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
        torch.cuda.set_device(device)
    torch.manual_seed(args.seed + world.rank)  # DDP gives every rank rank 0's initial weights
    train = rank_split(args, world)
    if args.batch_size > len(train.labels):
        raise SystemExit(f"--batch-size {args.batch_size} is larger than the {len(train.labels)} training images"
                         f"{' of a rank' if args.ddp else ''}")
    _, height, width, channels = train.images.shape
    if args.model_config:
        model_config = yaml.safe_load(args.model_config.read_text()).get("model", {})
        args.model = model_config.get("name", "simple_cnn")
        model = build_model(model_config, channels, height, width, train.classes).to(device)
    else:
        model = make_model(args.model, channels, height, width, train.classes).to(device)
    if args.sync_batchnorm:
        if device.type == "cpu":
            pytorch_cpu_syncbn.enable()
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    if args.style == "tuned" and device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    style = (Coursework if args.style == "coursework" else Tuned)(model, train, args, device)
    timer = Timer(device)
    if args.epochs:
        result = run_epochs(style, args, timer, read_split(args.data, "test"), world)
    else:
        result = run_steps(style, args, timer, world)
    if world.rank == 0:
        report(args, result, world, device)
    if args.ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
