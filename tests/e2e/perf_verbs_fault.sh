#!/usr/bin/env bash
# A NIC fails under a live peer: 2 hosts x 2 ranks run all_reduce in a loop over the emulated
# HCA, and rank 1's HCA fails its 300th RDMA write (BRAID_IB_EMULATE_FAULT=KIND:300: a completion
# with IBV_WC_RETRY_EXC_ERR, a post refused, or the port going down: IBV_EVENT_PORT_ERR, and the
# port's writes then unanswered). Every rank must fail within seconds of the fault, with the
# deadline left at 10 minutes (so no rank may wait for it): rank 1 naming the peer, the NIC and
# the verbs status (or the async event), the others the failed link. A down port's writes would
# fail by themselves only after the transport timeout (IB_TIMEOUT 20, 7 retries: 34 s), so that
# run must end well before it, through the async event alone.
#
# Measured from the fault: the emulated HCA writes the moment it injects the fault
# (E2E_FAULT_FILE, lib.sh), and each rank's stderr is stamped where braid-perf says its call
# failed. The bound, 10 s, is generous for the event path, which takes milliseconds
# (docs/reliability.md, "Fault to error"), and far below the slower ways a rank could come to
# fail: a down port's writes (34 s) and the deadline (10 minutes). (The watch connections are
# TCP and stay up, so the heartbeat's silence never ends anything here.)
#
# usage: perf_verbs_fault.sh BRAID_PERF completion|post|port_down
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 2 ]] || fail "usage: $0 BRAID_PERF completion|post|port_down"
perf=$1 kind=$2
bound_ms=10000
export BRAID_IB_EMULATE=1 BRAID_NET=IB BRAID_TIMEOUT_MS=600000
export E2E_RUN_LIMIT_S=60 # read by run_on_hosts (lib.sh): far below the deadline
E2E_STAMP_ERRORS=1
run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" 2 4 bash -c \
  'if [[ $RANK == 1 ]]; then export BRAID_IB_EMULATE_FAULT=$0:300; fi; exec "$@"' "$kind" \
  "$perf" all_reduce -b 64K -e 64K -n 100000 -w 1 -c 0
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
  err=$(rank_file "$E2E_TMP/err" "$rank")
  grep -q "the network link between rank" "$err" || fail "rank $rank does not say a link failed" "$err"
done
fault_to_error "$bound_ms" "$E2E_TMP/err" 4
# The ranks end together: the last within 1 s of the first (each waits on its own calls, which
# the failure ends on all of them at once).
ends=$(awk '$1 == "end" { print $2 }' "$E2E_TMP"/err*.times | sort -n)
spread_ms=$((($(tail -1 <<<"$ends") - $(head -1 <<<"$ends")) / 1000000))
((spread_ms < 1000)) || fail "the ranks ended ${spread_ms} ms apart: some waited on" "$E2E_TMP/err"
echo "PASS [$E2E_NAME]: every rank failed naming the link, at most ${FAULT_MAX_MS} ms after" \
  "the fault; the last ended ${spread_ms} ms after the first"
