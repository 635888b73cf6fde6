#!/usr/bin/env bash
# Ranks on several "hosts" of one machine: each braid-perf process is one rank started with
# torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and a BRAID_HOSTID naming its
# host, so ranks of different hosts talk over the socket transport and ranks of one host over
# shm. Every rank exits 0 and rank 0's table has #wrong 0 at every size. With EXPECT_ERROR set,
# the collective must fail instead, and rank 0's error output must contain that text.
#
# usage: perf_hosts.sh BRAID_PERF HOSTS RANKS_PER_HOST COLLECTIVE MIN MAX FACTOR [flags...]
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -ge 7 ]] || fail "usage: $0 BRAID_PERF HOSTS RANKS_PER_HOST COLLECTIVE MIN MAX FACTOR [flags]"
perf=$1 hosts=$2 per_host=$3 collective=$4 min=$5 max=$6 factor=$7
shift 7
nranks=$((hosts * per_host))
port=$(free_port)
unset BRAID_COMM_ID NCCL_COMM_ID OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE

pids=()
for ((rank = 0; rank < nranks; rank++)); do
  BRAID_HOSTID="host$((rank / per_host))" RANK=$rank WORLD_SIZE=$nranks \
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port BRAID_DEBUG=INFO \
    timeout --kill-after=5 "$E2E_RUN_LIMIT_S" \
    "$perf" "$collective" -b "$min" -e "$max" -f "$factor" "$@" \
    >"$E2E_TMP/out$rank" 2>"$E2E_TMP/err$rank" &
  pids+=($!)
  E2E_PIDS+=($!)
done
if [[ -n ${EXPECT_ERROR:-} ]]; then
  rc=0
  wait "${pids[0]}" || rc=$?
  [[ $rc -ne 0 ]] || fail "rank 0 succeeded; expected an error saying '$EXPECT_ERROR'" \
    "$E2E_TMP/out0" "$E2E_TMP/err0"
  grep -qF "$EXPECT_ERROR" "$E2E_TMP/err0" "$E2E_TMP/out0" ||
    fail "rank 0's error does not say '$EXPECT_ERROR'" "$E2E_TMP/out0" "$E2E_TMP/err0"
  echo "PASS [$E2E_NAME]: $collective across hosts refused: $EXPECT_ERROR"
  exit 0
fi
for ((rank = 0; rank < nranks; rank++)); do
  rc=0
  wait "${pids[$rank]}" || rc=$?
  [[ $rc -eq 0 ]] || fail "rank $rank (host$((rank / per_host))) exited with $rc" \
    "$E2E_TMP/out$rank" "$E2E_TMP/err$rank"
done
grep -q "network: $hosts hosts; socket transport listening on" "$E2E_TMP/err0" ||
  fail "rank 0 did not report $hosts hosts on the socket transport" "$E2E_TMP/err0"
check_table "$E2E_TMP/out0" "$nranks" "$min" "$max" "$factor" "$(type_size float)"
echo "PASS [$E2E_NAME]: $hosts hosts x $per_host ranks, $collective"
