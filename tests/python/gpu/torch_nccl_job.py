"""A PyTorch job on backend "nccl" with CUDA tensors, for scripts/gpu-check: run with braid's
libnccl.so.2 in place of NVIDIA's (LD_PRELOAD) and with NVIDIA's, then compare.

    launch.py N torch_nccl_job.py OUT.pt [--cpu]

Every rank runs all_reduce (float32 and bfloat16), broadcast, all_gather_into_tensor,
reduce_scatter_tensor and a DDP training step on GPU 0 (braid lets several ranks share a GPU;
NVIDIA's NCCL does not, so its run is N = 1). Each result is checked against a reference computed
on the CPU from every rank's input (every rank can make them: seeded per rank); rank 0 saves its
results to OUT.pt, which gpu-check compares between the libraries at N = 1. It prints which
libnccl.so.2 the process loaded. --cpu runs the same job on CPU tensors with braid_torch, to check
the script itself on a machine without a GPU.
"""

import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

out_path = sys.argv[1]
cpu = "--cpu" in sys.argv
device = torch.device("cpu" if cpu else "cuda:0")
if not cpu:
    torch.cuda.set_device(device)
if cpu:
    import braid_torch  # noqa: F401  (Gloo of PyTorch 1.13 lacks all_gather_into_tensor)
dist.init_process_group(backend="braid" if cpu else "nccl")
rank, n = dist.get_rank(), dist.get_world_size()


def loaded_nccl():
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libnccl" in line}
    return ", ".join(sorted(paths)) or "none"


def rank_input(r, count, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed * 1009 + r)
    return torch.randint(-8, 8, (count,), generator=g).to(dtype)


def check(name, got, want, tolerance=0.0):
    got = got.cpu()
    ok = torch.allclose(got.double(), want.double(), rtol=tolerance, atol=tolerance) \
        if tolerance else torch.equal(got, want)
    if not ok:
        raise AssertionError(f"rank {rank}: {name} differs from the reference by "
                             f"{(got.double() - want.double()).abs().max().item()}")
    results[name] = got


results = {}
for count in (1, 1000, 1 << 20):
    for dtype in (torch.float32, torch.bfloat16):
        inputs = [rank_input(r, count, count, dtype) for r in range(n)]
        t = inputs[rank].to(device, copy=True)
        dist.all_reduce(t)
        check(f"all_reduce {dtype} x{count}", t, sum(x.double() for x in inputs).to(dtype))
    t = rank_input(rank, count, 2 * count).to(device, copy=True)
    dist.broadcast(t, src=n - 1)
    check(f"broadcast x{count}", t, rank_input(n - 1, count, 2 * count))
    inputs = [rank_input(r, count, 3 * count) for r in range(n)]
    out = torch.empty(n * count, device=device)
    dist.all_gather_into_tensor(out, inputs[rank].to(device, copy=True))
    check(f"all_gather x{count}", out, torch.cat(inputs))
    inputs = [rank_input(r, n * count, 4 * count) for r in range(n)]
    out = torch.empty(count, device=device)
    dist.reduce_scatter_tensor(out, inputs[rank].to(device, copy=True))
    check(f"reduce_scatter x{count}", out, sum(inputs)[rank * count:(rank + 1) * count])

# A DDP step: its averaged gradients against the gradients of the whole batch on one CPU model.
torch.manual_seed(7)
reference = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 8))
model = DDP(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 8)).to(device),
            device_ids=None if cpu else [0], bucket_cap_mb=0.1)
model.module.load_state_dict(reference.state_dict())
batches = [(torch.randn(32, 64, generator=torch.Generator().manual_seed(r)),
            torch.randn(32, 8, generator=torch.Generator().manual_seed(100 + r))) for r in range(n)]
x, y = batches[rank]
nn.functional.mse_loss(model(x.to(device, copy=True)), y.to(device, copy=True)).backward()
# DDP averages per-rank mean losses: the reference's loss is the mean of the ranks' losses.
sum(nn.functional.mse_loss(reference(bx), by) for bx, by in batches).div(n).backward()
for (name, p), q in zip(model.module.named_parameters(), reference.parameters()):
    check(f"ddp grad {name}", p.grad, q.grad, tolerance=1e-4)

if not cpu:
    torch.cuda.synchronize()
if rank == 0:
    torch.save(results, out_path)
print(f"rank {rank} of {n}: {len(results)} results match their references; libnccl: "
      f"{loaded_nccl()}", flush=True)
dist.destroy_process_group()
