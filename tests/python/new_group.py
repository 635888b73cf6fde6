"""torch.distributed.new_group on backend "braid": subgroups of a braid world are splits of its
communicator (every rank calls new_group; ranks left out take part in the split and get
NON_GROUP_MEMBER), and a braid group in a world of another backend meets through the store.

    new_group.py [world backend: braid | gloo]     (launch.py runs it as 4 ranks)
"""

import sys

import torch
import torch.distributed as dist

from common import expect_equal, join

world_backend = sys.argv[1] if len(sys.argv) > 1 else "braid"
rank, n = join(world_backend)
assert n == 4, "new_group.py runs on 4 ranks"

layouts = {
    "evens": [0, 2],
    "odds": [1, 3],
    "reversed": [3, 2, 1],  # torch sorts the ranks: group ranks follow the global order
    "single": [3],
    "all": None,
}
groups = {name: dist.new_group(ranks, backend="braid") for name, ranks in layouts.items()}

for name, ranks in layouts.items():
    members = sorted(ranks) if ranks is not None else list(range(n))
    group = groups[name]
    if rank not in members:
        assert group == dist.GroupMember.NON_GROUP_MEMBER, f"{name}: rank {rank} got a group"
        continue
    assert dist.get_backend(group) == "braid", f"{name}: backend {dist.get_backend(group)}"
    assert group.size() == len(members), f"{name}: size {group.size()}"
    assert group.rank() == members.index(rank), f"{name}: rank {group.rank()}"
    t = torch.tensor([float(rank + 1), 1.0])
    dist.all_reduce(t, group=group)
    expect_equal(t, torch.tensor([float(sum(m + 1 for m in members)), float(len(members))]),
                 f"all_reduce in {name}")
    # Roots and peers are global ranks, as torch.distributed takes them.
    root = members[-1]
    t = torch.full((3,), float(rank))
    dist.broadcast(t, src=root, group=group)
    expect_equal(t, torch.full((3,), float(root)), f"broadcast in {name} from global {root}")
    if len(members) >= 2:
        i = members.index(rank)
        nxt, prv = members[(i + 1) % len(members)], members[(i - 1) % len(members)]
        got = torch.empty(2, dtype=torch.int64)
        reqs = [dist.irecv(got, src=prv, group=group),
                dist.isend(torch.tensor([rank, 7]), dst=nxt, group=group)]
        for r in reqs:
            r.wait()
        expect_equal(got, torch.tensor([prv, 7]), f"isend/irecv in {name}")

# The world still works after the splits, and groups can go before it does.
t = torch.ones(1)
dist.all_reduce(t)
expect_equal(t, torch.tensor([float(n)]), "all_reduce in the world after the splits")
for group in groups.values():
    if group != dist.GroupMember.NON_GROUP_MEMBER:
        dist.destroy_process_group(group)
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: new_group on a {world_backend} world works")
