"""braid as a torch.distributed backend for CPU tensors.

Importing this module registers the backend "braid"::

    import torch.distributed as dist
    import braid_torch  # noqa: F401
    dist.init_process_group(backend="braid")  # env:// : MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE

Every rank's process group is one braid communicator on host memory. Ranks meet through the
job's store (rank 0 puts a unique id in it), as PyTorch's NCCL backend does. new_group() splits
the world's communicator (ncclCommSplit), so a subgroup costs no new rendezvous.

For CUDA tensors use backend="nccl" with braid's libnccl.so.2 in place of NVIDIA's
(docs/dropin.md).
"""

import atexit

import torch.distributed as dist
from torch.distributed import distributed_c10d as _c10d

from ._C import ProcessGroupBraid, _drain_all, unique_id, version  # noqa: F401

__all__ = ["ProcessGroupBraid", "version"]

_UNIQUE_ID_KEY = "braid_torch/unique_id"


def _world():
    """The default group when it is braid's, else None."""
    if not dist.is_initialized():
        return None
    world = _c10d._get_default_group()
    return world if isinstance(world, ProcessGroupBraid) else None


def _create(options, _pg_options):
    """torch.distributed's creator for backend "braid" (extended_api: it gets the group's ranks)."""
    world = _world()
    members = list(options.global_ranks_in_group)
    if world is not None and members:
        # A subgroup of a braid world: a split of the world's communicator. Members are sorted,
        # so the key (this rank's place in the group) orders the new communicator as torch does.
        group = world._split(options.store, options.group_rank)
    else:
        # The world, or a braid group in a world of another backend: a rendezvous of its own,
        # through the store torch gives this group (prefixed with the group's name).
        store = options.store
        if options.group_rank == 0:
            store.set(_UNIQUE_ID_KEY, unique_id())
        group = ProcessGroupBraid.create(
            store, store.get(_UNIQUE_ID_KEY), options.group_rank, options.group_size
        )
    assert group.rank() == options.group_rank and group.size() == options.group_size
    return group


# PyTorch 1.13 never calls a backend on the ranks a new group leaves out, but a split is a
# collective of the whole parent (ncclCommSplit waits for every rank of it): the ranks left out
# take part here, with NCCL_SPLIT_NOCOLOR, before torch returns them NON_GROUP_MEMBER. Later
# PyTorch releases call the backend on every rank; this wrapper is for 1.13's shape.
_torch_new_process_group_helper = _c10d._new_process_group_helper


def _new_process_group_helper(group_size, group_rank, global_ranks_in_group, backend, *args,
                              **kwargs):
    world = _world()
    if (world is not None and global_ranks_in_group and dist.Backend(backend) == "braid"
            and world.rank() not in global_ranks_in_group):
        world._split_out()
    return _torch_new_process_group_helper(group_size, group_rank, global_ranks_in_group, backend,
                                           *args, **kwargs)


# A group's operations run on a thread of its own, which may need the GIL to drop a tensor. At the
# interpreter's end such a thread would be stopped at its first try, so the queues run dry here,
# before it, whatever the program left in flight (groups it never destroyed are destroyed later).
atexit.register(_drain_all)

if not hasattr(dist.Backend, "BRAID"):
    dist.Backend.register_backend("braid", _create, extended_api=True)
    _c10d._new_process_group_helper = _new_process_group_helper
