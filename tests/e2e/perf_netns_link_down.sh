#!/usr/bin/env bash
# A host's link goes down in the middle of a run: 2 hosts (network namespaces) of 2 ranks run
# all_reduce in a loop; host 1's interface is taken down. Every rank must then fail, saying a
# peer timed out or the network failed, within BRAID_TIMEOUT_MS plus the time a rank takes to
# let go of its connections; nothing may hang.
#
# Measured from the fault: the script notes the moment it takes the link down (E2E_FAULT_FILE,
# lib.sh), and each rank's stderr is stamped where braid-perf says its call failed. A cut link
# closes nothing, so here the deadline is the path: a rank's wait gives up BRAID_TIMEOUT_MS after
# it last moved, which is at most that long after the link went down. The bound adds 7 s for a
# loaded 2-core VM to that: 10 s in all, half the heartbeat's silence (BRAID_HEARTBEAT_TIMEOUT_MS,
# 20 s), which must not be what ends a rank here, and far below the default deadline (10 min).
#
# usage: perf_netns_link_down.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
perf=$1
timeout_ms=3000
# A rank's socket FIFOs keep sending what was posted for up to 10 s after a failure
# (transport/net/socket/socket_fifo.cc); then braid-perf exits.
limit_s=$((timeout_ms / 1000 + 10 + 10))
error_bound_ms=$((timeout_ms + 7000))
netns_hosts 2
export BRAID_TIMEOUT_MS=$timeout_ms
E2E_RUN_LIMIT_S=120 # read by run_on_hosts (lib.sh)
export E2E_RUN_LIMIT_S
E2E_STAMP_ERRORS=1
(run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" 2 4 "$perf" all_reduce -b 1M -e 1M -n 1000000 -w 1 \
  -c 0 && echo "$RUN_RC" >"$E2E_TMP/rc") &
runner=$!
# Wait until the ranks are past their first collective (rank 0 prints the table's header).
for ((i = 0; i < 200; i++)); do
  grep -q '(B)' "$E2E_TMP/out" 2>/dev/null && break
  sleep 0.1
done
grep -q '(B)' "$E2E_TMP/out" || fail "the run did not start" "$E2E_TMP/out" "$E2E_TMP/err"
sleep 1
note_fault "link_down:host1"
ip -n "${BRAID_NETNS_HOSTS[1]}" link set bveth0 down
down=$(date +%s)
# The runner fails (having said why) when a rank outlived E2E_RUN_LIMIT_S.
wait "$runner" || fail "a rank did not end after the link went down" "$E2E_TMP/out" "$E2E_TMP/err"
took=$(($(date +%s) - down))
((took <= limit_s)) || fail "the ranks took ${took}s to give up after the link went down (limit ${limit_s}s)"
(($(cat "$E2E_TMP/rc") != 0)) || fail "every rank exited 0 although its link went down" "$E2E_TMP/out"
for ((rank = 0; rank < 4; rank++)); do
  err=$(rank_file "$E2E_TMP/err" "$rank")
  grep -qE "timed out|remote process exited|network error" "$err" ||
    fail "rank $rank did not report a timeout or network error" "$err"
done
fault_to_error "$error_bound_ms" "$E2E_TMP/err" 4
echo "PASS [$E2E_NAME]: every rank failed with a remote error at most ${FAULT_MAX_MS} ms after" \
  "the link went down (BRAID_TIMEOUT_MS=$timeout_ms), the last ended ${took}s after it"
