"""What the rank scripts share: joining the job, per-rank inputs every rank can recompute, and
exact comparison with a reference."""

import torch
import torch.distributed as dist

import braid_torch  # noqa: F401  (registers backend "braid")

# Types braid maps to NCCL's, with the operators each is checked with.
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTEGERS = [torch.int8, torch.uint8, torch.int32, torch.int64]
SIZES = [1, 13, 1000, 65537]


def join(backend="braid"):
    """init_process_group from torchrun's environment; returns (rank, world size)."""
    dist.init_process_group(backend=backend)
    return dist.get_rank(), dist.get_world_size()


def rank_input(rank, count, dtype, seed, low=0, high=4):
    """Rank `rank`'s operand: small integers (so sums and products are exact in every type),
    the same on every process that asks for it."""
    g = torch.Generator().manual_seed(seed * 1009 + rank)
    values = torch.randint(low, high, (count,), generator=g)
    return values.to(dtype) if dtype != torch.bool else values % 2 == 1


def expect_equal(got, want, what, tolerance=0.0):
    if got.dtype != want.dtype or got.shape != want.shape:
        raise AssertionError(f"{what}: got {got.dtype} {tuple(got.shape)}, "
                             f"want {want.dtype} {tuple(want.shape)}")
    if tolerance:
        ok = torch.allclose(got.double(), want.double(), rtol=tolerance, atol=tolerance)
    else:
        ok = torch.equal(got, want)
    if not ok:
        bad = (got.double() != want.double()).nonzero()[:4].flatten().tolist()
        raise AssertionError(f"{what}: wrong at {bad}: got {got.flatten()[bad].tolist()}, "
                             f"want {want.flatten()[bad].tolist()}")


def expect_error(fn, words, what):
    """fn() must raise RuntimeError whose message holds every word of `words`."""
    try:
        fn()
    except RuntimeError as e:
        missing = [w for w in words if w not in str(e)]
        if missing:
            raise AssertionError(f"{what}: the error does not say {missing}: {e}") from e
        return
    raise AssertionError(f"{what}: no error")
