#!/usr/bin/env bash
# braid-perf launched by mpirun: two processes find each other through OMPI_COMM_WORLD_RANK/SIZE
# (with no rendezvous address given, at a port derived from the job id); rank 0 prints a table
# with #wrong 0. Skipped (exit 77) where mpirun is not installed.
#
# usage: perf_mpirun.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
command -v mpirun >/dev/null || skip "mpirun is not installed"
out=$E2E_TMP/out err=$E2E_TMP/err

# A launcher's rendezvous variables from the caller's environment would override mpirun's.
unset BRAID_COMM_ID NCCL_COMM_ID MASTER_ADDR MASTER_PORT RANK WORLD_SIZE
# Open MPI refuses to run as root unless told that it is meant.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 run_perf "$out" "$err" \
  mpirun --oversubscribe -np 2 "$1" all_reduce -b 8 -e 64K -f 8 -n 2 -w 1
expect_success "$out" "$err"
check_table "$out" 2 8 65536 8 4
echo "PASS [$E2E_NAME]"
