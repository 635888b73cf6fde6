"""Every torch.distributed collective on backend "braid", against a reference computed from every
rank's input: all_reduce with every ReduceOp and type, broadcast and reduce from every root (a
reduce changes only the root's buffer), all_gather, gather, scatter, reduce_scatter, all_to_all
(equal and uneven splits), barrier, send/recv, coalesced all-reduce and async handles.

Run by launch.py as N ranks."""

import functools
import os

import torch
import torch.distributed as dist

from common import FLOATS, INTEGERS, SIZES, expect_equal, join, rank_input

rank, n = join()
Op = dist.ReduceOp


def fold(op, operands):
    return functools.reduce(op, operands)


# Reference of each operator over every rank's operand, and the operators checked per type.
REFERENCE = {
    "SUM": lambda xs: fold(torch.add, xs),
    "PRODUCT": lambda xs: fold(torch.mul, xs),
    "MIN": lambda xs: fold(torch.minimum, xs),
    "MAX": lambda xs: fold(torch.maximum, xs),
    "BAND": lambda xs: fold(torch.bitwise_and, xs),
    "BOR": lambda xs: fold(torch.bitwise_or, xs),
    "BXOR": lambda xs: fold(torch.bitwise_xor, xs),
}


def operators(dtype):
    if dtype == torch.bool:
        return ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
    if dtype in FLOATS:
        return ["SUM", "PRODUCT", "MIN", "MAX", "AVG", "PREMUL_SUM"]
    return ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]


def reference(name, operands):
    if name == "AVG":
        return (fold(torch.add, [x.double() for x in operands]) / n).to(operands[0].dtype)
    if name == "PREMUL_SUM":
        return fold(torch.add, [x.double() * 0.5 for x in operands]).to(operands[0].dtype)
    if operands[0].dtype == torch.bool and name in ("SUM", "PRODUCT"):
        name = {"SUM": "BOR", "PRODUCT": "BAND"}[name]  # torch's NCCL backend's meaning
    return REFERENCE[name](operands)


def torch_op(name):
    return dist._make_nccl_premul_sum(0.5) if name == "PREMUL_SUM" else getattr(Op, name)


def check_all_reduce():
    seed = 0
    for dtype in FLOATS + INTEGERS + [torch.bool]:
        for name in operators(dtype):
            for count in SIZES:
                seed += 1
                operands = [rank_input(r, count, dtype, seed, low=1) for r in range(n)]
                t = operands[rank].clone()
                dist.all_reduce(t, op=torch_op(name))
                loose = name in ("AVG", "PREMUL_SUM") and dtype in (torch.float16, torch.bfloat16)
                expect_equal(t, reference(name, operands), f"all_reduce {name} {dtype} x{count}",
                             tolerance=1e-2 if loose else 0.0)


def check_rooted():
    for root in range(n):
        for count in (1, 4099):
            t = rank_input(root, count, torch.float32, 100 + root) if rank == root else \
                torch.zeros(count)
            dist.broadcast(t, src=root)
            expect_equal(t, rank_input(root, count, torch.float32, 100 + root),
                         f"broadcast from {root} x{count}")

            operands = [rank_input(r, count, torch.int64, 200 + root) for r in range(n)]
            t = operands[rank].clone()
            dist.reduce(t, dst=root, op=Op.SUM)
            want = fold(torch.add, operands) if rank == root else operands[rank]
            expect_equal(t, want, f"reduce to {root} x{count} (non-roots keep their input)")
            t = operands[rank].clone()
            dist.reduce(t, dst=root, op=Op.BXOR)
            want = fold(torch.bitwise_xor, operands) if rank == root else operands[rank]
            expect_equal(t, want, f"reduce BXOR to {root}")

            ins = [rank_input(r, count, torch.float64, 300 + root) for r in range(n)]
            outs = [torch.empty(count, dtype=torch.float64) for _ in range(n)] if rank == root \
                else None
            dist.gather(ins[rank], gather_list=outs, dst=root)
            if rank == root:
                for r in range(n):
                    expect_equal(outs[r], ins[r], f"gather to {root}: rank {r}'s block")

            blocks = [rank_input(r, count, torch.int32, 400 + root) for r in range(n)]
            out = torch.empty(count, dtype=torch.int32)
            dist.scatter(out, scatter_list=blocks if rank == root else None, src=root)
            expect_equal(out, blocks[rank], f"scatter from {root}")


def check_gathers_and_scatters():
    for count in (1, 13, 70000):
        ins = [rank_input(r, count, torch.float32, 500 + count) for r in range(n)]
        outs = [torch.empty(count) for _ in range(n)]
        dist.all_gather(outs, ins[rank])
        for r in range(n):
            expect_equal(outs[r], ins[r], f"all_gather x{count}: rank {r}'s block")
        flat = torch.empty(n * count)
        dist.all_gather_into_tensor(flat, ins[rank])
        expect_equal(flat, torch.cat(ins), f"all_gather_into_tensor x{count}")

        # Rank r's input block j, reduced over r, lands on rank j.
        blocks = [[rank_input(r * n + j, count, torch.int64, 600) for j in range(n)]
                  for r in range(n)]
        out = torch.empty(count, dtype=torch.int64)
        dist.reduce_scatter(out, blocks[rank], op=Op.SUM)
        expect_equal(out, fold(torch.add, [blocks[r][rank] for r in range(n)]),
                     f"reduce_scatter x{count}")
        dist.reduce_scatter(out, blocks[rank], op=Op.BOR)
        expect_equal(out, fold(torch.bitwise_or, [blocks[r][rank] for r in range(n)]),
                     f"reduce_scatter BOR x{count}")
        dist.reduce_scatter_tensor(out, torch.cat(blocks[rank]), op=Op.MAX)
        expect_equal(out, fold(torch.maximum, [blocks[r][rank] for r in range(n)]),
                     f"reduce_scatter_tensor MAX x{count}")


def check_all_to_all():
    # Equal blocks: rank r's block j goes to rank j.
    count = 5
    blocks = [[rank_input(r * n + j, count, torch.float32, 700) for j in range(n)]
              for r in range(n)]
    out = torch.empty(n * count)
    dist.all_to_all_single(out, torch.cat(blocks[rank]))
    expect_equal(out, torch.cat([blocks[r][rank] for r in range(n)]), "all_to_all_single")
    # Uneven: rank r sends (r + j) % 3 rows of 2 to rank j.
    rows = [[(r + j) % 3 for j in range(n)] for r in range(n)]
    sends = [[rank_input(r * n + j, 2 * rows[r][j], torch.int32, 800).view(-1, 2)
              for j in range(n)] for r in range(n)]
    recv_rows = [rows[r][rank] for r in range(n)]
    out = torch.empty(sum(recv_rows), 2, dtype=torch.int32)
    dist.all_to_all_single(out, torch.cat(sends[rank]), output_split_sizes=recv_rows,
                           input_split_sizes=rows[rank])
    expect_equal(out, torch.cat([sends[r][rank] for r in range(n)]), "all_to_all_single, splits")
    outs = [torch.empty(rows[r][rank], 2, dtype=torch.int32) for r in range(n)]
    dist.all_to_all(outs, sends[rank])
    for r in range(n):
        expect_equal(outs[r], sends[r][rank], f"all_to_all: from rank {r}")


def check_point_to_point():
    # A ring: every rank sends to the next and receives from the previous, both orders of calls.
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    for count in (3, 100000):
        mine = rank_input(rank, count, torch.float32, 900 + count)
        got = torch.empty(count)
        if rank % 2 == 0:
            dist.send(mine, nxt)
            dist.recv(got, prv)
        else:
            dist.recv(got, prv)
            dist.send(mine, nxt)
        expect_equal(got, rank_input(prv, count, torch.float32, 900 + count), f"send/recv x{count}")
        reqs = [dist.irecv(got, prv), dist.isend(mine, nxt)]
        for req in reqs:
            req.wait()
        expect_equal(got, rank_input(prv, count, torch.float32, 900 + count), f"irecv/isend x{count}")


def check_async_and_coalesced():
    operands = [[rank_input(r, 1000 + i, torch.float32, 1000 + i) for r in range(n)]
                for i in range(8)]
    tensors = [ops[rank].clone() for ops in operands]
    works = [dist.all_reduce(t, async_op=True) for t in tensors]
    futures = [w.get_future() for w in works]
    for i, (w, fut) in enumerate(zip(works, futures)):
        w.wait()
        assert w.is_completed(), f"async all_reduce {i}: not completed"
        result = fut.wait()
        expect_equal(result[0], tensors[i], f"async all_reduce {i}: the future's value")
        expect_equal(tensors[i], fold(torch.add, operands[i]), f"async all_reduce {i}")
    tensors = [ops[rank].clone() for ops in operands]
    dist.all_reduce_coalesced(tensors, op=Op.MAX)
    for i, t in enumerate(tensors):
        expect_equal(t, fold(torch.maximum, operands[i]), f"all_reduce_coalesced tensor {i}")
    # Objects ride on all_gather and broadcast of byte tensors.
    objects = [None] * n
    dist.all_gather_object(objects, {"rank": rank})
    assert objects == [{"rank": r} for r in range(n)], f"all_gather_object: {objects}"
    dist.barrier()


for check in (check_all_reduce, check_rooted, check_gathers_and_scatters, check_all_to_all,
              check_point_to_point, check_async_and_coalesced):
    if os.environ.get("BRAID_TORCH_TEST_VERBOSE"):
        print(f"rank {rank}: {check.__name__}", flush=True)
    check()
dist.destroy_process_group()
print(f"rank {rank}: every collective matched its reference")
