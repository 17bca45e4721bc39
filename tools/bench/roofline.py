# The compute floor of one training step: FLOPs counted from the architecture (and checked against
# torch's FlopCounterMode), and a measured images/s turned into achieved TFLOP/s and a fraction of peak.
"""Usage: python tools/bench/roofline.py [--model resnet18] [--batch 512] [--images-per-s X]
                                      [--peak-tflops P | --measure-peak bf16|fp16|tf32|fp32] [--layers]

Counts the multiply-accumulates of every convolution and linear layer from the layer shapes (a forward
pass on the meta device, which runs no arithmetic), and takes a training step as 3x the forward FLOPs
(forward, input gradient, weight gradient; 1 MAC = 2 FLOPs). Element-wise work (batch norm, ReLU,
pooling, the optimizer) is memory-bound and not counted, as in every model-FLOPs convention.
The count is cross-checked against torch.utils.flop_counter.FlopCounterMode on a real CPU forward +
backward at --check-batch images: the two must agree up to the first convolution's input gradient,
which autograd skips because the images need no gradient.

With --images-per-s (e.g. from `fusetrain bench step` or pytorch_baseline.py) it prints the achieved
TFLOP/s; with a peak (--peak-tflops from the datasheet, or --measure-peak: a large square matmul on the
current device in that precision) also the fraction of it.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from pytorch_baseline import Timer  # noqa: E402
from pytorch_models import MODELS, make_model  # noqa: E402

PEAK_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32, "fp32": torch.float32}


def layer_macs(name: str, shape: tuple[int, int, int], classes: int) -> list[tuple[str, tuple[int, ...], int]]:
    """(layer, output shape, MACs) per image for every Conv2d and Linear, in execution order."""
    channels, height, width = shape
    with torch.device("meta"):
        model = make_model(name, channels, height, width, classes)
    layers = []

    def record(module: nn.Module, inputs: tuple[torch.Tensor], output: torch.Tensor, layer: str) -> None:
        if isinstance(module, nn.Conv2d):
            kh, kw = module.kernel_size
            macs = output[0].numel() * module.in_channels // module.groups * kh * kw
        else:
            macs = output[0].numel() * module.in_features
        layers.append((layer, tuple(output.shape[1:]), macs))

    for layer, module in model.named_modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            module.register_forward_hook(lambda m, i, o, layer=layer: record(m, i, o, layer))
    model(torch.empty(1, channels, height, width, device="meta"))
    return layers


def counted_flops_per_image(name: str, shape: tuple[int, int, int], classes: int, batch: int) -> float:
    """FlopCounterMode's total for a CPU forward + cross-entropy + backward, per image."""
    torch.manual_seed(0)
    model = make_model(name, *shape, classes)
    x = torch.randn(batch, *shape)
    y = torch.randint(0, classes, (batch,))
    with FlopCounterMode(display=False) as counter:
        F.cross_entropy(model(x), y).backward()
    return counter.get_total_flops() / batch


def measure_matmul_tflops(precision: str, device: torch.device) -> float:
    """TFLOP/s of a large square matmul in `precision`: the attainable matrix rate of this device."""
    n, repeats = (8192, 50) if device.type == "cuda" else (1024, 5)
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    a = torch.randn(n, n, device=device, dtype=PEAK_DTYPES[precision])
    b = torch.randn_like(a)
    out = torch.empty_like(a)
    for _ in range(3):
        torch.mm(a, b, out=out)
    timer = Timer(device)
    timer.start()
    for _ in range(repeats):
        torch.mm(a, b, out=out)
    return 2 * n ** 3 * repeats / timer.stop() / 1e12


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=MODELS, default="resnet18")
    parser.add_argument("--batch", type=int, default=512, help="images per training step")
    parser.add_argument("--image", default="3x32x32", help="CxHxW")
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--check-batch", type=int, default=8, help="batch of the FlopCounterMode cross-check")
    parser.add_argument("--images-per-s", type=float, help="measured training throughput")
    peak = parser.add_mutually_exclusive_group()
    peak.add_argument("--peak-tflops", type=float, help="the device's peak TFLOP/s in the run's precision")
    peak.add_argument("--measure-peak", choices=tuple(PEAK_DTYPES), help="measure it with a matmul")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="for --measure-peak")
    parser.add_argument("--layers", action="store_true", help="print every conv/linear layer's MACs")
    args = parser.parse_args()
    shape = tuple(int(v) for v in args.image.split("x"))
    if len(shape) != 3:
        parser.error("--image must look like 3x32x32")

    layers = layer_macs(args.model, shape, args.classes)
    macs = sum(m for _, _, m in layers)
    step_flops = 6 * macs  # 2 FLOPs per MAC, forward + input gradient + weight gradient
    if args.layers:
        print("| layer | output | MMAC/image | share |\n|---|---|---|---|")
        for layer, out, m in layers:
            print(f"| {layer} | {'x'.join(map(str, out))} | {m / 1e6:.2f} | {100 * m / macs:.1f}% |")
    print(f"{args.model}, {args.image}, {args.classes} classes, {len(layers)} conv/linear layers")
    print(f"forward: {macs / 1e9:.4f} GMAC/image = {2 * macs / 1e9:.4f} GFLOP/image")
    print(f"training step (3x forward): {step_flops / 1e9:.4f} GFLOP/image, "
          f"{step_flops * args.batch / 1e12:.4f} TFLOP per step of {args.batch} images")

    counted = counted_flops_per_image(args.model, shape, args.classes, args.check_batch)
    skipped = 2 * layers[0][2]  # the first layer's input gradient
    gap = (counted - (step_flops - skipped)) / step_flops
    print(f"FlopCounterMode (CPU forward + backward, batch {args.check_batch}): {counted / 1e9:.4f} GFLOP/image; "
          f"count - first-layer input gradient ({skipped / 1e9:.4f}) differs by {100 * gap:+.3f}%")
    if abs(gap) > 1e-3:
        raise SystemExit("error: the architecture count and FlopCounterMode disagree")

    if args.images_per_s is None:
        return
    achieved = step_flops * args.images_per_s / 1e12
    print(f"at {args.images_per_s:.1f} images/s: {achieved:.2f} TFLOP/s achieved")
    peak_tflops = args.peak_tflops
    if args.measure_peak:
        device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                              "cpu" if args.device == "auto" else args.device)
        peak_tflops = measure_matmul_tflops(args.measure_peak, device)
        print(f"measured {args.measure_peak} matmul peak on {device.type}: {peak_tflops:.2f} TFLOP/s")
    if peak_tflops:
        print(f"fraction of peak ({peak_tflops:.4g} TFLOP/s): {100 * achieved / peak_tflops:.1f}%")


if __name__ == "__main__":
    main()
