#!/usr/bin/env bash
# braid-perf started the way torchrun starts workers: two processes with RANK, WORLD_SIZE,
# MASTER_ADDR and MASTER_PORT. Both exit 0 and rank 0 prints a table with #wrong 0.
#
# usage: perf_torchrun_env.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
perf=$1
port=$(free_port)
# mpirun's variables from the caller's environment would take precedence over RANK/WORLD_SIZE.
unset BRAID_COMM_ID NCCL_COMM_ID OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE

pids=()
for rank in 0 1; do
  RANK=$rank WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    timeout --kill-after=5 "$E2E_RUN_LIMIT_S" \
    "$perf" all_reduce -b 8 -e 64K -f 8 -n 2 -w 1 \
    >"$E2E_TMP/out$rank" 2>"$E2E_TMP/err$rank" &
  pids+=($!)
  E2E_PIDS+=($!)
done
for rank in 0 1; do
  rc=0
  wait "${pids[$rank]}" || rc=$?
  [[ $rc -eq 0 ]] || fail "rank $rank (MASTER_PORT=$port) exited with $rc" \
    "$E2E_TMP/out$rank" "$E2E_TMP/err$rank"
done
check_table "$E2E_TMP/out0" 2 8 65536 8 4
if grep -q '^#  Rank ' "$E2E_TMP/out1"; then fail "rank 1 printed a table too" "$E2E_TMP/out1"; fi
echo "PASS [$E2E_NAME]: MASTER_PORT=$port"
