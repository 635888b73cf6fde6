#!/usr/bin/env bash
# A host-memory rank is placed on the CPU node (socket) that holds the cores it may run on. On a
# topology file with two one-core sockets (cores 0 and 1), braid-perf --bind core pins rank 0 to
# core 0 and rank 1 to core 1, and the INFO summary at init places them on cpu0 and cpu1; unpinned,
# both may run on either core and are placed on the first CPU node.
#
# usage: perf_numa_placement.sh BRAID_PERF TOPOLOGY_FILE
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 2 ]] || fail "usage: $0 BRAID_PERF TOPOLOGY_FILE"
[[ $(nproc) -ge 2 ]] || skip "needs 2 CPUs to pin two ranks apart, this machine has $(nproc)"
out=$E2E_TMP/out err=$E2E_TMP/err

BRAID_DEBUG=INFO BRAID_TOPO_FILE=$2 run_perf "$out" "$err" "$1" all_reduce --procs 2 --bind core \
  -b 8 -e 8 -n 1 -w 0
expect_success "$out" "$err"
grep -q 'braid INFO topology: .*2 ranks: 0 cpu0, 1 cpu1;' "$err" ||
  fail "pinned to cores 0 and 1, the ranks were not placed on cpu0 and cpu1" "$err"
grep -q 'ring: 0 1;' "$err" || fail "no 'ring: 0 1;' line" "$err"

BRAID_DEBUG=INFO BRAID_TOPO_FILE=$2 run_perf "$out" "$err" "$1" all_reduce --procs 2 \
  -b 8 -e 8 -n 1 -w 0
expect_success "$out" "$err"
grep -q 'braid INFO topology: .*2 ranks: 0-1 cpu0;' "$err" ||
  fail "unpinned, the ranks were not both placed on the first CPU node" "$err"
echo "PASS [$E2E_NAME]"
