"""all_reduce on torch.distributed backend "braid" against backend "gloo", in the same job.

The world is braid's and a Gloo group holds the same ranks, so both run in the same processes
on the same tensors, alternating size by size. Each size: warm-up calls, then `iters` timed calls
(a barrier of the backend under test first, so every rank starts together); the figure is the
median over calls of the slowest rank's time. Rank 0 prints a Markdown table.

    launch.py N allreduce_vs_gloo.py [--max-bytes B] [--iters I]
"""

import argparse
import statistics
import time

import torch
import torch.distributed as dist

import braid_torch  # noqa: F401

parser = argparse.ArgumentParser()
parser.add_argument("--min-bytes", type=int, default=8)
parser.add_argument("--max-bytes", type=int, default=64 << 20)
parser.add_argument("--iters", type=int, default=0, help="timed calls per size (0: by size)")
args = parser.parse_args()

dist.init_process_group(backend="braid")
rank, n = dist.get_rank(), dist.get_world_size()
groups = {"braid": dist.group.WORLD, "gloo": dist.new_group(backend="gloo")}


def timed(group, tensor, iters):
    """Median over calls of the slowest rank's all_reduce time, in microseconds."""
    for _ in range(max(2, iters // 10)):
        dist.all_reduce(tensor, group=group)
    times = []
    for _ in range(iters):
        dist.barrier(group=group)
        start = time.perf_counter()
        dist.all_reduce(tensor, group=group)
        times.append(time.perf_counter() - start)
    slowest = torch.tensor(times, dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX, group=groups["gloo"])
    return statistics.median(slowest.tolist()) * 1e6


def memcpy_us(nbytes, iters):
    src, dst = torch.ones(nbytes // 4), torch.empty(nbytes // 4)
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        dst.copy_(src)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


rows = []
nbytes = args.min_bytes
while nbytes <= args.max_bytes:
    iters = args.iters or (1000 if nbytes <= 1 << 16 else 100 if nbytes <= 1 << 22 else 10)
    t = torch.ones(max(1, nbytes // 4))
    result = {name: timed(g, t, iters) for name, g in groups.items()}
    rows.append((nbytes, result["gloo"], result["braid"], memcpy_us(nbytes, iters)))
    nbytes *= 8 if nbytes < 1 << 18 else 4

if rank == 0:
    print(f"all_reduce, float32 sum, {n} ranks on one machine (torch {torch.__version__})")
    print("| bytes | gloo (us) | braid (us) | braid / gloo speedup | busbw braid (GB/s) | memcpy (us) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for nbytes, gloo, braid, copy in rows:
        busbw = 2 * (n - 1) / n * nbytes / (braid * 1e-6) / 1e9
        print(f"| {nbytes} | {gloo:.1f} | {braid:.1f} | {gloo / braid:.1f}x | {busbw:.2f} | "
              f"{copy:.1f} |")
dist.destroy_process_group()
