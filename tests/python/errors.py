"""Bad calls on backend "braid" raise RuntimeError naming the problem, at the call, and leave the
group usable. Run by launch.py as 2 ranks."""

import torch
import torch.distributed as dist

from common import expect_equal, expect_error, join

rank, n = join()
Op = dist.ReduceOp

expect_error(lambda: dist.all_reduce(torch.ones(4, 4).t()), ["contiguous"],
             "a non-contiguous tensor")
expect_error(lambda: dist.all_reduce(torch.ones(2), op=Op.BAND), ["bitwise", "Float"],
             "BAND of floats")
expect_error(lambda: dist.all_reduce(torch.ones(2, dtype=torch.bool), op=Op.AVG), ["bool"],
             "AVG of bools")
expect_error(lambda: dist.all_reduce(torch.ones(2, dtype=torch.int16)), ["Short", "not supported"],
             "an int16 tensor (NCCL has no 16-bit integers)")
expect_error(lambda: dist.recv(torch.ones(2)), ["any source"], "recv without a source")
expect_error(lambda: dist.all_gather([torch.ones(2)], torch.ones(2)), ["one tensor per rank"],
             "all_gather with too few outputs")
expect_error(lambda: dist.all_gather([torch.ones(3)] * n, torch.ones(2)), ["elements"],
             "all_gather with outputs of the wrong size")
expect_error(lambda: dist.all_gather_into_tensor(torch.ones(3), torch.ones(2)), ["elements"],
             "all_gather_into_tensor with a wrong-size output")
expect_error(lambda: dist.reduce_scatter(torch.ones(2), [torch.ones(2)]), ["one tensor per rank"],
             "reduce_scatter with too few inputs")
expect_error(lambda: dist.all_to_all_single(torch.ones(2 * n), torch.ones(2 * n),
                                            input_split_sizes=[1] * n),
             ["add up"], "all_to_all_single splits that do not cover the input")
expect_error(lambda: dist.all_reduce(torch.ones(2, dtype=torch.float32).to_sparse()), ["dense"],
             "a sparse tensor")

# None of it reached the communicator: it still works.
t = torch.ones(3)
dist.all_reduce(t)
expect_equal(t, torch.full((3,), float(n)), "all_reduce after the refused calls")
dist.destroy_process_group()
print(f"rank {rank}: every bad call raised a clear error")
