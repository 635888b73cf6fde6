#!/usr/bin/env bash
# torch.distributed all_reduce on backend "braid" against backend "gloo" in the same job (the
# same processes, alternating size by size): bench/torch/allreduce_vs_gloo.py, ranks started by
# tests/python/launch.py with torchrun's environment. Prints a Markdown table (rank 0's).
#
# usage: bench/compare-gloo.sh [ranks] [allreduce_vs_gloo.py options]   (default: 2 ranks)
set -euo pipefail
source "$(dirname "$0")/../scripts/lib/common.sh"
NRANKS="${1:-2}"
shift || true

braid_install_deps
braid_build braid_torch >/dev/null
echo "$NRANKS ranks on $(nproc) cores of $(uname -n), $(date -u +%F)"
PYTHONWARNINGS=ignore PYTHONPATH="$BRAID_BUILD/python" BRAID_TORCH_TEST_TIMEOUT=1200 \
  /usr/bin/python3 "$BRAID_ROOT/tests/python/launch.py" "$NRANKS" \
  "$BRAID_ROOT/bench/torch/allreduce_vs_gloo.py" "$@" | grep -v '^launch.py:'
