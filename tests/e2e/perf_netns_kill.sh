#!/usr/bin/env bash
# A rank is killed in the middle of a run across hosts: 2 hosts (network namespaces with host
# names of their own) of 2 ranks each run all_reduce in a loop, and rank 3, on host 1, is killed
# with SIGKILL. BRAID_TIMEOUT_MS stays at its default of 10 minutes: every other rank must still
# give up within seconds, with an error that names rank 3 as lost (src/watch), and nothing may
# hang.
#
# Measured from the kill: the script notes the moment just before it sends SIGKILL
# (E2E_FAULT_FILE, lib.sh), and each survivor's stderr is stamped where braid-perf says its call
# failed. The bound, 10 s, is generous for the watch's word of a death, which takes milliseconds
# (docs/reliability.md, "Fault to error"), and half the heartbeat's silence
# (BRAID_HEARTBEAT_TIMEOUT_MS, 20 s): a survivor that heard of the death only that way, or waited
# for the deadline, fails.
#
# usage: perf_netns_kill.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
perf=$1
limit_s=30
error_bound_ms=10000
victim=3
netns_hosts 2
unset BRAID_TIMEOUT_MS BRAID_HEARTBEAT_TIMEOUT_MS
port=$(free_port)
pids=()
for ((rank = 0; rank < 4; rank++)); do
  host=$((rank / 2))
  stamp_stderr "$(rank_file "$E2E_TMP/err" "$rank")"
  (unset BRAID_COMM_ID NCCL_COMM_ID OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE BRAID_HOSTID
   exec ip netns exec "${BRAID_NETNS_HOSTS[$host]}" unshare --uts sh -c \
     'hostname "$0" && exec "$@"' "braid-host$host" env RANK=$rank WORLD_SIZE=4 \
     MASTER_ADDR="$(braid_netns_addr 0)" MASTER_PORT="$port" BRAID_SOCKET_IFNAME=bveth \
     BRAID_DEBUG=WARN "$perf" all_reduce -b 1M -e 1M -n 1000000 -w 1 -c 0) \
    >"$(rank_file "$E2E_TMP/out" "$rank")" 2>"$STAMP_FIFO" &
  pids+=($!)
  E2E_PIDS+=($!)
done
# Wait until the ranks are past their first collective (rank 0 prints the table's header).
for ((i = 0; i < 300; i++)); do
  grep -q '(B)' "$E2E_TMP/out" 2>/dev/null && break
  sleep 0.1
done
grep -q '(B)' "$E2E_TMP/out" || fail "the run did not start" "$E2E_TMP/out" "$E2E_TMP/err"
sleep 1
# The victim is the braid-perf of namespace 1 whose environment says RANK=3.
target=""
for pid in $(ip netns pids "${BRAID_NETNS_HOSTS[1]}"); do
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == braid-perf ]] || continue
  tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "RANK=$victim" && target=$pid
done
[[ -n $target ]] || fail "rank $victim's process was not found in ${BRAID_NETNS_HOSTS[1]}"
note_fault "kill:rank$victim"
kill -KILL "$target"
killed=$(date +%s%N)
for ((rank = 0; rank < 4; rank++)); do
  ((rank == victim)) && continue
  for ((i = 0; i < limit_s * 10; i++)); do
    kill -0 "${pids[$rank]}" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "${pids[$rank]}" 2>/dev/null &&
    fail "rank $rank still runs ${limit_s}s after rank $victim was killed" \
      "$(rank_file "$E2E_TMP/err" "$rank")"
done
took_ms=$((($(date +%s%N) - killed) / 1000000))
wait_stampers
for ((rank = 0; rank < 4; rank++)); do
  ((rank == victim)) && continue
  err=$(rank_file "$E2E_TMP/err" "$rank")
  grep -q "rank $victim (pid [0-9]*) is lost" "$err" ||
    fail "rank $rank's error does not name rank $victim as lost" "$err"
done
fault_to_error "$error_bound_ms" "$E2E_TMP/err" 4 "$victim"
echo "PASS [$E2E_NAME]: every surviving rank named rank $victim as lost, at most" \
  "${FAULT_MAX_MS} ms after the kill; the last exited within ${took_ms} ms of it"
