"""Every rank exits by itself once its work is done, however its groups end (issue 48).

A group's operations run on a thread of its own (work_queue.h). When that thread drops the last
reference to a tensor whose Python object torch keeps alive from C++, it needs the GIL; a rank
whose main thread held the GIL while it waited for that thread never exited. So this job leaves
the queue's thread as much of that as it can: operations queued with their tensors and handles
dropped at once, then

  - ROUNDS times, a group destroyed while its operations are still queued
    (dist.destroy_process_group(group) with the GIL held), and
  - at the end, the world's group left to the interpreter's exit with operations in flight.

launch.py --exit-within fails the test when a rank has not exited a few seconds after the first
one did; a hang here would otherwise last until the job's timeout.

    exit_cleanly.py [rounds]     (launch.py runs it as N ranks)
"""

import sys

import torch
import torch.distributed as dist

from common import join

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
rank, n = join()


def queue_and_forget(group, count):
    """Queues `count` all-reduces whose tensors and handles this thread drops at once."""
    for i in range(count):
        dist.all_reduce(torch.full((4096,), float(i)), group=group, async_op=True)
    dist.all_gather([torch.empty(512) for _ in range(n)], torch.ones(512), group=group,
                    async_op=True)


for _ in range(rounds):
    group = dist.new_group(backend="braid")
    queue_and_forget(group, 16)
    dist.destroy_process_group(group)

# The world's results, checked, so that the job is known to have run before it exits.
t = torch.full((8,), float(rank + 1))
dist.all_reduce(t)
assert torch.equal(t, torch.full((8,), float(n * (n + 1) // 2))), t
queue_and_forget(None, 32)
print(f"rank {rank}: {rounds} groups destroyed with operations queued; exiting with more queued",
      flush=True)
