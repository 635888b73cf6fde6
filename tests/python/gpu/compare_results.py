"""Compares two results files of torch_nccl_job.py (rank 0's, same N): collectives must agree
exactly, DDP gradients to 1e-6. Prints one line; exits 1 on a difference.

    compare_results.py BRAID.pt NVIDIA.pt
"""

import sys

import torch

ours, theirs = (torch.load(path) for path in sys.argv[1:3])
if set(ours) != set(theirs):
    sys.exit(f"compare_results: different results: {sorted(set(ours) ^ set(theirs))}")
bad = []
for name in sorted(ours):
    a, b = ours[name].double(), theirs[name].double()
    if a.shape != b.shape:
        bad.append(f"{name} (shapes {tuple(a.shape)} and {tuple(b.shape)})")
        continue
    same = torch.allclose(a, b, rtol=1e-6, atol=1e-6) if name.startswith("ddp") else torch.equal(a, b)
    if not same:
        bad.append(f"{name} (by {(a - b).abs().max().item()})")
if bad:
    sys.exit(f"compare_results: {len(bad)} of {len(ours)} differ: {', '.join(bad)}")
print(f"compare_results: all {len(ours)} results agree")
