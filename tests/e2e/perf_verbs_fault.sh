#!/usr/bin/env bash
# A NIC fails under a live peer: 2 hosts x 2 ranks run all_reduce in a loop over the emulated
# HCA, and rank 1's HCA fails its 300th RDMA write (BRAID_IB_EMULATE_FAULT=KIND:300: a completion
# with IBV_WC_RETRY_EXC_ERR, a post refused, or the port going down: IBV_EVENT_PORT_ERR, and the
# port's writes then unanswered). Every rank must fail within seconds, with the deadline left at
# 10 minutes (so no rank may wait for it): rank 1 naming the peer, the NIC and the verbs status
# (or the async event), the others the failed link. A down port's writes would fail by themselves
# only after the transport timeout (IB_TIMEOUT 20, 7 retries: 34 s), so that run must end well
# before it, through the async event alone.
#
# usage: perf_verbs_fault.sh BRAID_PERF completion|post|port_down
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 2 ]] || fail "usage: $0 BRAID_PERF completion|post|port_down"
perf=$1 kind=$2
export BRAID_IB_EMULATE=1 BRAID_NET=IB BRAID_TIMEOUT_MS=600000
export E2E_RUN_LIMIT_S=60 # read by run_on_hosts (lib.sh): far below the deadline
export E2E_END_DIR=$E2E_TMP # each rank writes when it ended into end.RANK there
start=$(date +%s%N)
run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" 2 4 bash -c \
  'if [[ $RANK == 1 ]]; then export BRAID_IB_EMULATE_FAULT=$0:300; fi
   rc=0; "$@" || rc=$?; date +%s%N >"$E2E_END_DIR/end.$RANK"; exit $rc' "$kind" \
  "$perf" all_reduce -b 64K -e 64K -n 100000 -w 1 -c 0
took_ms=$((($(date +%s%N) - start) / 1000000))
# The ranks end together: the last within 1 s of the first (each waits on its own calls, which
# the failure ends on all of them at once).
ends=$(cat "$E2E_TMP"/end.*)
spread_ms=$((($(sort -n <<<"$ends" | tail -1) - $(sort -n <<<"$ends" | head -1)) / 1000000))
((RUN_RC != 0)) || fail "every rank exited 0 although a NIC failed" "$E2E_TMP/out"
# The 300th write may be a slot's or a credit's (the receiving end's, which words its status
# without the number), whichever the channels' interleaving made it.
status="transport retry counter exceeded"
[[ $kind == post ]] && status="posting a \(write\|credit\)"
[[ $kind == port_down ]] && status="emu_0:1 reported IBV_EVENT_PORT_ERR (the port went down)"
grep -q "the network link between rank 1 and rank [0-9]* failed: verbs: .*$status.*(on emu_" \
  "$E2E_TMP/err.1" || fail "rank 1 does not name the peer, the NIC and the verbs status" \
  "$E2E_TMP/err.1"
for ((rank = 0; rank < 4; rank++)); do
  err=$E2E_TMP/err.$rank
  ((rank == 0)) && err=$E2E_TMP/err
  grep -q "the network link between rank" "$err" || fail "rank $rank does not say a link failed" "$err"
done
if [[ $kind == port_down ]] && ((took_ms >= 20000)); then
  fail "the run took ${took_ms} ms: the down port was noticed by its writes' timeout, not its event" \
    "$E2E_TMP/err.1"
fi
[[ $(wc -l <<<"$ends") -eq 4 ]] || fail "not every rank said when it ended" "$E2E_TMP/err"
((spread_ms < 1000)) || fail "the ranks ended ${spread_ms} ms apart: some waited on" "$E2E_TMP/err"
echo "PASS [$E2E_NAME]: every rank failed naming the link, ${took_ms} ms for the whole run," \
  "the last ${spread_ms} ms after the first"
