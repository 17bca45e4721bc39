# CPU kernels for the five operators torch.nn.SyncBatchNorm calls that PyTorch ships for GPUs only, so that its
# own module, autograd function and DDP path can run on CPU ranks over gloo as the peer of model.sync_batchnorm.
"""enable(): registers CPU implementations of aten::batch_norm_stats, batch_norm_gather_stats_with_counts,
batch_norm_elemt, batch_norm_backward_reduce and batch_norm_backward_elemt (each as the CUDA kernel computes it:
biased per-rank statistics, their combination with counts into the global mean and inverse deviation with the
running statistics updated from the unbiased global variance, the normalisation, the per-channel sums of the
backward and the input gradient from the global sums), and lifts the two checks that keep SyncBatchNorm off
CPU tensors (its forward's device check, DDP's GPU-module check). Everything else, the all-gather of the
statistics in forward and the all-reduce of the sums in backward included, is PyTorch's own code
(torch/nn/modules/_functions.py). For benchmarks only: it changes process-wide state.
"""
from __future__ import annotations

import torch
from torch.nn.parallel import DistributedDataParallel

_library = None


def _per_channel(v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return v.view(1, -1, *([1] * (x.dim() - 2)))


def _dims(x: torch.Tensor) -> list[int]:
    return [0, *range(2, x.dim())]


def _stats(x, eps):
    xf = x.float() if x.dtype != torch.float64 else x
    mean = xf.mean(_dims(x))
    var = xf.var(_dims(x), unbiased=False)
    return mean, (var + eps).rsqrt()


def _gather(x, mean, invstd, running_mean, running_var, momentum, eps, counts):
    counts = counts.to(mean.dtype).view(-1, 1)
    n = counts.sum()
    global_mean = (mean * counts).sum(0) / n
    var_each = 1 / (invstd * invstd) - eps
    global_var = ((var_each + (mean - global_mean) ** 2) * counts).sum(0) / n
    if running_mean is not None:
        running_mean.mul_(1 - momentum).add_(global_mean.to(running_mean.dtype), alpha=momentum)
    if running_var is not None:
        unbiased = global_var * n / (n - 1)
        running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype), alpha=momentum)
    return global_mean, (global_var + eps).rsqrt()


def _elemt(x, weight, bias, mean, invstd, eps):
    y = (x - _per_channel(mean, x)) * _per_channel(invstd, x)
    if weight is not None:
        y = y * _per_channel(weight, x)
    if bias is not None:
        y = y + _per_channel(bias, x)
    return y.to(x.dtype)


def _backward_reduce(dy, x, mean, invstd, weight, input_g, weight_g, bias_g):
    xmu = x - _per_channel(mean, x)
    sum_dy = dy.sum(_dims(x))
    sum_dy_xmu = (dy * xmu).sum(_dims(x))
    return sum_dy, sum_dy_xmu, sum_dy_xmu * invstd, sum_dy.clone()  # weight and bias gradients: always made


def _backward_elemt(dy, x, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
    n = count.sum().to(mean.dtype)
    xmu = x - _per_channel(mean, x)
    scale = invstd if weight is None else invstd * weight
    dx = (dy - _per_channel(sum_dy / n, x) - xmu * _per_channel(invstd * invstd * sum_dy_xmu / n, x))
    return (dx * _per_channel(scale, x)).to(x.dtype)


def enable() -> None:
    """Registers the CPU kernels (once) and lifts SyncBatchNorm's two GPU-only checks in this process."""
    global _library
    if _library is not None:
        return
    _library = torch.library.Library("aten", "IMPL")
    for name, kernel in (("batch_norm_stats", _stats), ("batch_norm_gather_stats_with_counts", _gather),
                         ("batch_norm_elemt", _elemt), ("batch_norm_backward_reduce", _backward_reduce),
                         ("batch_norm_backward_elemt", _backward_elemt)):
        _library.impl(name, kernel, "CPU")
    # SyncBatchNorm.forward accepts the device types of its list, which ends with the PrivateUse1 backend's name:
    # during its forward alone that name is "cpu" (elsewhere, autocast's checks need the real one).
    forward = torch.nn.SyncBatchNorm.forward

    def cpu_forward(self, input):
        backend_name = torch._C._get_privateuse1_backend_name
        torch._C._get_privateuse1_backend_name = lambda: "cpu"
        try:
            return forward(self, input)
        finally:
            torch._C._get_privateuse1_backend_name = backend_name

    torch.nn.SyncBatchNorm.forward = cpu_forward
    DistributedDataParallel._passing_sync_batchnorm_handle = lambda self, module: None


def _check_rank(rank: int, ranks: int, port: int) -> None:
    """One rank of the self-check: PyTorch's SyncBatchNorm on this rank's slice against BatchNorm2d over the
    whole batch (output, input gradient, all-reduced parameter gradients, running statistics), float64."""
    import os
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=ranks)
    enable()
    torch.manual_seed(0)
    plain = torch.nn.BatchNorm2d(3).double()
    with torch.no_grad():
        plain.weight.uniform_(0.5, 1.5), plain.bias.uniform_(-1, 1)
    synced = DistributedDataParallel(torch.nn.SyncBatchNorm.convert_sync_batchnorm(
        torch.nn.Sequential(torch.nn.BatchNorm2d(3).double())))
    synced.module[0].load_state_dict(plain.state_dict())
    x_all = torch.randn(4 * ranks, 3, 5, 5, dtype=torch.float64) * 2 + 1
    g_all = torch.randn_like(x_all)
    x = x_all[4 * rank:4 * (rank + 1)].clone().requires_grad_(True)
    (synced(x) * g_all[4 * rank:4 * (rank + 1)]).sum().backward()
    x_ref = x_all.clone().requires_grad_(True)
    (plain(x_ref) * g_all).sum().div(ranks).backward()  # DDP averages the ranks' gradients
    layer = synced.module[0]
    worst = max((x.grad - x_ref.grad[4 * rank:4 * (rank + 1)] * ranks).abs().max().item(),
                (layer.weight.grad - plain.weight.grad).abs().max().item(),
                (layer.bias.grad - plain.bias.grad).abs().max().item(),
                (layer.running_var - plain.running_var).abs().max().item(),
                (layer.running_mean - plain.running_mean).abs().max().item())
    print(f"rank {rank}: largest difference from BatchNorm over all {4 * ranks} images: {worst:.1e}")
    dist.destroy_process_group()
    if worst > 1e-10:
        raise SystemExit(1)


if __name__ == "__main__":
    import random
    import torch.multiprocessing as mp
    mp.spawn(_check_rank, args=(2, random.randint(20000, 40000)), nprocs=2)
