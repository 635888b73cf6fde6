#!/usr/bin/env bash
# One collective on two ranks, each a process of its own under compute-sanitizer, both on GPU 0,
# meeting through torchrun's variables (braid-perf joins such a job): scripts/gpu-check's sanitize
# phase. Processes rather than threads so that each sanitizer watches one rank, and no sanitizer
# has to run two ranks' kernels, each waiting on the other, side by side. Exits non-zero when a
# rank fails or its sanitizer reports an error.
#
# usage: sanitize_pair.sh TOOL COLLECTIVE BRAID_PERF ROOT
set -uo pipefail
tool=$1 coll=$2 perf=$3 root=$4
port=$(python3 "$root/tests/support/free_port.py")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pids=()
for rank in 0 1; do
  RANK=$rank WORLD_SIZE=2 LOCAL_RANK=$rank LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=$port compute-sanitizer --tool "$tool" --error-exitcode 86 --print-limit 20 \
    "$perf" "$coll" -b 4K -e 1M -f 256 -n 1 -w 0 -c 1 >"$out/$rank" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
for rank in 0 1; do sed "s/^/[rank $rank] /" "$out/$rank"; done
exit "$status"
