#!/usr/bin/env bash
# braid-perf started the way srun starts tasks: SLURM_PROCID, SLURM_NTASKS, SLURM_NNODES,
# SLURM_JOB_ID and SLURM_LAUNCH_NODE_IPADDR, no RANK or MASTER_ADDR: 2 tasks on 2 "nodes"
# (BRAID_HOSTID), the root at the launch node's address on a port derived from the job id.
# Both exit 0 and rank 0 prints a table with #wrong 0.
#
# usage: perf_slurm_env.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
perf=$1
unset BRAID_COMM_ID NCCL_COMM_ID OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE RANK WORLD_SIZE \
  MASTER_ADDR MASTER_PORT
job=$((100000 + RANDOM))
pids=()
for task in 0 1; do
  SLURM_PROCID=$task SLURM_NTASKS=2 SLURM_NNODES=2 SLURM_LOCALID=0 SLURM_JOB_ID=$job \
    SLURM_STEP_ID=0 SLURM_LAUNCH_NODE_IPADDR=127.0.0.1 BRAID_HOSTID="node$task" \
    BRAID_DEBUG=INFO timeout --kill-after=5 "$E2E_RUN_LIMIT_S" \
    "$perf" all_reduce -b 8 -e 65536 -f 8 -n 2 -w 1 -c 1 \
    >"$E2E_TMP/out$task" 2>"$E2E_TMP/err$task" &
  pids+=($!)
  E2E_PIDS+=($!)
done
for task in 0 1; do
  rc=0
  wait "${pids[$task]}" || rc=$?
  [[ $rc -eq 0 ]] || fail "task $task (SLURM_JOB_ID=$job) exited with $rc" \
    "$E2E_TMP/out$task" "$E2E_TMP/err$task"
done
grep -q "network: 2 hosts" "$E2E_TMP/err0" || fail "braid did not see 2 nodes" "$E2E_TMP/err0"
check_table "$E2E_TMP/out0" 2 8 65536 8 4
echo "PASS [$E2E_NAME]: SLURM_JOB_ID=$job"
