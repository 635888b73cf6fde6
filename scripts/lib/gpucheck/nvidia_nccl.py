"""Prints the path of NVIDIA's libnccl.so.2 on this machine, the one PyTorch loads: its wheel's
(nvidia-nccl-cu*), else torch/lib's, else the CUDA toolkit's. Exits 1 when there is none.
scripts/gpu-check's perf phase runs braid-perf on it, beside braid's."""

import glob
import os
import sys


def candidates():
    try:
        import nvidia.nccl

        for base in nvidia.nccl.__path__:
            yield from sorted(glob.glob(os.path.join(base, "lib", "libnccl.so*")))
    except Exception:
        pass
    try:
        import torch

        yield from sorted(glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib",
                                                 "libnccl.so*")))
    except Exception:
        pass
    yield from sorted(glob.glob("/usr/local/cuda/lib64/libnccl.so.2*"))


for path in candidates():
    print(os.path.realpath(path))
    sys.exit(0)
sys.exit(1)
