"""A DistributedDataParallel training step on backend "braid" against the same step on Gloo.

The world is braid's; a Gloo group of the same ranks is made beside it. Two copies of one model
(same initial weights) are wrapped in DDP, one per backend, fed the same per-rank batches, and
after every backward pass their averaged gradients must agree (to float32 rounding: the two
backends add in different orders), as must the weights after the optimizer's step. Small buckets
make DDP all-reduce several buckets per step, overlapped with the backward pass.
"""

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from common import join

rank, n = join()
gloo = dist.new_group(backend="gloo")


def model():
    torch.manual_seed(1234)
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 4))


braid_model = DDP(model(), bucket_cap_mb=0.005)  # on the default (braid) group
gloo_model = DDP(model(), process_group=gloo, bucket_cap_mb=0.005)
braid_opt = torch.optim.SGD(braid_model.parameters(), lr=0.1)
gloo_opt = torch.optim.SGD(gloo_model.parameters(), lr=0.1)

for step in range(4):
    g = torch.Generator().manual_seed(100 * step + rank)
    x, y = torch.randn(16, 32, generator=g), torch.randn(16, 4, generator=g)
    for m, opt in ((braid_model, braid_opt), (gloo_model, gloo_opt)):
        opt.zero_grad()
        nn.functional.mse_loss(m(x), y).backward()
    for (name, pb), pg in zip(braid_model.named_parameters(), gloo_model.parameters()):
        if not torch.allclose(pb.grad, pg.grad, rtol=1e-5, atol=1e-6):
            raise AssertionError(f"step {step}: {name}'s gradient differs from Gloo's by "
                                 f"{(pb.grad - pg.grad).abs().max().item()}")
    braid_opt.step()
    gloo_opt.step()

# Every rank ends with the same weights (DDP's promise), equal to Gloo's.
for (name, pb), pg in zip(braid_model.named_parameters(), gloo_model.parameters()):
    assert torch.allclose(pb, pg, rtol=1e-5, atol=1e-6), f"{name} differs from Gloo's"
    copies = [torch.empty_like(pb) for _ in range(n)]
    dist.all_gather(copies, pb.detach())
    assert all(torch.equal(c, copies[0]) for c in copies), f"{name} differs between ranks"
dist.destroy_process_group()
print(f"rank {rank}: DDP on braid matches DDP on Gloo")
