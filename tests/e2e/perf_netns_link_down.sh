#!/usr/bin/env bash
# A host's link goes down in the middle of a run: 2 hosts (network namespaces) of 2 ranks run
# all_reduce in a loop; host 1's interface is taken down. Every rank must then fail, saying a
# peer timed out or the network failed, within BRAID_TIMEOUT_MS plus the time a rank takes to
# let go of its connections; nothing may hang.
#
# usage: perf_netns_link_down.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
perf=$1
timeout_ms=3000
# A rank's socket FIFOs keep sending what was posted for up to 10 s after a failure
# (transport/net/socket_fifo.cc); then braid-perf exits.
limit_s=$((timeout_ms / 1000 + 10 + 10))
netns_hosts 2
export BRAID_TIMEOUT_MS=$timeout_ms
E2E_RUN_LIMIT_S=120 # read by run_on_hosts (lib.sh)
export E2E_RUN_LIMIT_S
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
ip -n "${BRAID_NETNS_HOSTS[1]}" link set bveth0 down
down=$(date +%s)
# The runner fails (having said why) when a rank outlived E2E_RUN_LIMIT_S.
wait "$runner" || fail "a rank did not end after the link went down" "$E2E_TMP/out" "$E2E_TMP/err"
took=$(($(date +%s) - down))
((took <= limit_s)) || fail "the ranks took ${took}s to give up after the link went down (limit ${limit_s}s)"
(($(cat "$E2E_TMP/rc") != 0)) || fail "every rank exited 0 although its link went down" "$E2E_TMP/out"
for ((rank = 0; rank < 4; rank++)); do
  err=$E2E_TMP/err.$rank
  ((rank == 0)) && err=$E2E_TMP/err
  grep -qE "timed out|remote process exited|network error" "$err" ||
    fail "rank $rank did not report a timeout or network error" "$err"
done
echo "PASS [$E2E_NAME]: every rank failed with a remote error ${took}s after the link went down"
