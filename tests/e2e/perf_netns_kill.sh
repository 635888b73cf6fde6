#!/usr/bin/env bash
# A rank is killed in the middle of a run across hosts: 2 hosts (network namespaces with host
# names of their own) of 2 ranks each run all_reduce in a loop, and rank 3, on host 1, is killed
# with SIGKILL. BRAID_TIMEOUT_MS stays at its default of 10 minutes: every other rank must still
# give up within seconds, with an error that names rank 3 as lost (src/watch), and nothing may
# hang.
#
# usage: perf_netns_kill.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
perf=$1
limit_s=30
victim=3
netns_hosts 2
unset BRAID_TIMEOUT_MS
port=$(free_port)
pids=()
for ((rank = 0; rank < 4; rank++)); do
  host=$((rank / 2))
  (unset BRAID_COMM_ID NCCL_COMM_ID OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE BRAID_HOSTID
   exec ip netns exec "${BRAID_NETNS_HOSTS[$host]}" unshare --uts sh -c \
     'hostname "$0" && exec "$@"' "braid-host$host" env RANK=$rank WORLD_SIZE=4 \
     MASTER_ADDR="$(braid_netns_addr 0)" MASTER_PORT="$port" BRAID_SOCKET_IFNAME=bveth \
     BRAID_DEBUG=WARN "$perf" all_reduce -b 1M -e 1M -n 1000000 -w 1 -c 0) \
    >"$E2E_TMP/out.$rank" 2>"$E2E_TMP/err.$rank" &
  pids+=($!)
  E2E_PIDS+=($!)
done
# Wait until the ranks are past their first collective (rank 0 prints the table's header).
for ((i = 0; i < 300; i++)); do
  grep -q '(B)' "$E2E_TMP/out.0" 2>/dev/null && break
  sleep 0.1
done
grep -q '(B)' "$E2E_TMP/out.0" || fail "the run did not start" "$E2E_TMP/out.0" "$E2E_TMP/err.0"
sleep 1
# The victim is the braid-perf of namespace 1 whose environment says RANK=3.
target=""
for pid in $(ip netns pids "${BRAID_NETNS_HOSTS[1]}"); do
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == braid-perf ]] || continue
  tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "RANK=$victim" && target=$pid
done
[[ -n $target ]] || fail "rank $victim's process was not found in ${BRAID_NETNS_HOSTS[1]}"
kill -KILL "$target"
killed=$(date +%s%N)
for ((rank = 0; rank < 4; rank++)); do
  ((rank == victim)) && continue
  for ((i = 0; i < limit_s * 10; i++)); do
    kill -0 "${pids[$rank]}" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "${pids[$rank]}" 2>/dev/null &&
    fail "rank $rank still runs ${limit_s}s after rank $victim was killed" "$E2E_TMP/err.$rank"
done
took_ms=$((($(date +%s%N) - killed) / 1000000))
for ((rank = 0; rank < 4; rank++)); do
  ((rank == victim)) && continue
  grep -q "rank $victim (pid [0-9]*) is lost" "$E2E_TMP/err.$rank" ||
    fail "rank $rank's error does not name rank $victim as lost" "$E2E_TMP/err.$rank"
done
echo "PASS [$E2E_NAME]: every surviving rank named rank $victim as lost; the last exited" \
  "${took_ms} ms after the kill"
