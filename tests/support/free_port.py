"""A TCP port nobody listens on now, for a test's rendezvous (tests/python/launch.py imports it,
tests/e2e/lib.sh runs it and reads the port it prints).

Picked at random in 10000-19999: below the kernel's ephemeral range (32768 and up on Linux), since
a port the kernel chose with bind(0) could be handed to another test's connection or listener
before the rank that is to listen on it binds it (which happened under ctest -j2), and below the
ports braid-perf derives from a job id under mpirun and srun (20000-39999, bench/perf/launch.cc),
which tests running beside these use.
"""

import random
import socket
import sys


def free_port():
    rng = random.SystemRandom()
    for _ in range(100):
        port = rng.randrange(10000, 20000)
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                continue
            return port
    sys.exit("free_port: no free port in 10000-19999")


if __name__ == "__main__":
    print(free_port())
