#!/usr/bin/env bash
# braid-perf under `mpirun -H a,b` across two hosts (network namespaces, lib.sh's netns_hosts):
# 2 ranks per host, the rendezvous found without MASTER_ADDR (braid-perf takes mpirun's address
# from its contact URI). mpirun runs on host 0 and starts host 1's daemon in its namespace
# through an rsh agent instead of ssh. rank 0's table has #wrong 0 at every size.
#
# usage: perf_netns_mpirun.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
perf=$1
command -v mpirun >/dev/null || skip "mpirun not found"
netns_hosts 2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset BRAID_COMM_ID NCCL_COMM_ID MASTER_ADDR MASTER_PORT RANK WORLD_SIZE

agent=$E2E_TMP/agent.sh
braid_netns_rsh_agent "$agent"

rc=0
braid_netns_exec 0 timeout --kill-after=5 "$E2E_RUN_LIMIT_S" mpirun -H 10.77.0.1:2,10.77.0.2:2 \
  -np 4 --mca plm_rsh_agent "$agent" --mca oob_tcp_if_include bveth0 \
  --mca btl_tcp_if_include bveth0 -x BRAID_SOCKET_IFNAME=bveth -x BRAID_DEBUG=INFO \
  "$perf" all_reduce -b 1024 -e 4194304 -f 16 -n 2 -w 1 -c 1 >"$E2E_TMP/out" 2>"$E2E_TMP/err" ||
  rc=$?
[[ $rc -eq 0 ]] || fail "mpirun exited with $rc" "$E2E_TMP/out" "$E2E_TMP/err"
grep -q "network: 2 hosts; listening on 10.77.0." "$E2E_TMP/err" ||
  fail "braid did not report 2 hosts on the socket transport" "$E2E_TMP/err"
check_table "$E2E_TMP/out" 4 1024 4194304 16 "$(type_size float)"
echo "PASS [$E2E_NAME]: mpirun -H across 2 hosts, 4 ranks"
