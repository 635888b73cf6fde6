"""Runs a test script as N ranks of a torch.distributed job, as torchrun would start them.

    launch.py [--hosts K] [--exit-within S] N script.py [args...]

Each rank is a process of this Python with torchrun's environment (MASTER_ADDR, MASTER_PORT,
RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE; Debian's torchrun does not start on Python 3.11,
so the tests start the ranks themselves). With --hosts K the ranks are K hosts of N / K ranks each
to braid (BRAID_HOSTID), which then connects hosts through its socket transport. Fails when any rank fails or the job outlives
BRAID_TORCH_TEST_TIMEOUT seconds (default 240); a failing rank's peers are stopped, so a rank
waiting for a dead one does not hang the test. With --exit-within S it also fails when a rank is
still running S seconds after the first rank exited: ranks that finish the same collectives
exit within moments of each other, and one that does not has hung on its way out.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from free_port import free_port  # noqa: E402


def main():
    args = sys.argv[1:]
    hosts = 1
    exit_within = None
    while args[:1] in (["--hosts"], ["--exit-within"]):
        if args[0] == "--hosts":
            hosts = int(args[1])
        else:
            exit_within = float(args[1])
        args = args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    nranks = int(args[0])
    command = [sys.executable] + args[1:]
    timeout = float(os.environ.get("BRAID_TORCH_TEST_TIMEOUT", "240"))
    port = str(free_port())
    ranks = []
    for rank in range(nranks):
        per_host = max(1, nranks // hosts)
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(rank),
                   WORLD_SIZE=str(nranks), LOCAL_RANK=str(rank % per_host),
                   LOCAL_WORLD_SIZE=str(per_host))
        if hosts > 1:
            env["BRAID_HOSTID"] = f"host{rank // per_host}"
        ranks.append(subprocess.Popen(command, env=env))
    deadline = time.monotonic() + timeout
    failed = None
    first_exit = None  # (rank, when)
    while failed is None and any(p.poll() is None for p in ranks):
        now = time.monotonic()
        for rank, p in enumerate(ranks):
            if p.poll() not in (None, 0):
                failed = f"rank {rank} exited with {p.returncode}"
            elif p.poll() == 0 and first_exit is None:
                first_exit = (rank, now)
        if failed is None and exit_within is not None and first_exit is not None and \
                now - first_exit[1] > exit_within:
            stuck = [r for r, p in enumerate(ranks) if p.poll() is None]
            failed = (f"rank(s) {stuck} had not exited {exit_within:.0f} s after rank "
                      f"{first_exit[0]} did")
        if failed is None and now > deadline:
            failed = f"the job did not finish in {timeout:.0f} s"
        time.sleep(0.05)
    if failed is None:
        failed = next((f"rank {r} exited with {p.returncode}"
                       for r, p in enumerate(ranks) if p.returncode != 0), None)
    for p in ranks:
        if p.poll() is None:
            p.kill()
        p.wait()
    if failed:
        sys.exit(f"launch.py: {' '.join(args[1:])} on {nranks} ranks: {failed}")
    print(f"launch.py: {' '.join(args[1:])}: {nranks} ranks on {hosts} host(s) passed")


if __name__ == "__main__":
    main()
