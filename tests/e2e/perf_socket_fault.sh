#!/usr/bin/env bash
# A socket connection breaks under live peers: 2 hosts x 2 ranks run all_reduce in a loop over the
# socket transport, and rank 1 breaks the connection of its 300th slot sent
# (BRAID_SOCKET_EMULATE_FAULT=reset:300): its send ends as a reset one does, and the rank at the
# other end reads an end of file in the middle of a slot. Every rank must fail within seconds,
# with the deadline left at 10 minutes (so no rank may wait for it): rank 1 naming the peer, the
# connection's addresses and interface and the system's words, the others the failed link.
#
# Measured from the fault: the socket transport writes the moment it breaks the connection
# (E2E_FAULT_FILE, lib.sh), and each rank's stderr is stamped where braid-perf says its call
# failed. The bound, 10 s, is generous for the failed link's word, which takes milliseconds
# (docs/reliability.md, "Fault to error"), and far below the deadline (10 minutes) that a rank
# that missed it would wait for. (The watch connections stay up, so the heartbeat's silence never
# ends anything here.)
#
# usage: perf_socket_fault.sh BRAID_PERF [SIZE]
# SIZE (default 64K) is braid-perf's message size: 4M sends slices lent from the user's buffers
# and receives them into its outputs (exec/lent_slices.h), whose ends a failed call must stop.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -ge 1 && $# -le 2 ]] || fail "usage: $0 BRAID_PERF [SIZE]"
perf=$1 size=${2:-64K}
# The whole run's bound: far below the deadline (10 minutes), which is what a rank that missed
# the failure would wait for. Not the ~1 s a quiet run takes: on a loaded CI machine a run took 8.7 s (2026-12-06), when
# a failed communicator's send ends still drained for up to 10 s on exit; they stop at once now
# (SocketLink::drainDeadline), and runs beside other tests still took 5.0-6.8 s.
bound_ms=30000
error_bound_ms=10000
export BRAID_NET=Socket BRAID_TIMEOUT_MS=600000
export E2E_RUN_LIMIT_S=60 # read by run_on_hosts (lib.sh): far below the deadline
E2E_STAMP_ERRORS=1
start=$(date +%s%N)
run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" 2 4 bash -c \
  'if [[ $RANK == 1 ]]; then export BRAID_SOCKET_EMULATE_FAULT=$0; fi; exec "$@"' reset:300 \
  "$perf" all_reduce -b "$size" -e "$size" -n 100000 -w 1 -c 0
took_ms=$((($(date +%s%N) - start) / 1000000))
((RUN_RC != 0)) || fail "every rank exited 0 although a connection broke" "$E2E_TMP/out"
# Rank 1 is one end of the link, whichever end's word came round first.
words="the network link between rank [0-9]* and rank [0-9]* failed: socket: sending to rank [0-9]* over"
words+=" 127.0.0.1:[0-9]* (lo) -> 127.0.0.1:[0-9]*: peer closed the connection (Connection reset"
grep -q "$words" "$E2E_TMP/err.1" ||
  fail "rank 1 does not name the peer, the connection and the system's words" "$E2E_TMP/err.1"
for ((rank = 0; rank < 4; rank++)); do
  err=$(rank_file "$E2E_TMP/err" "$rank")
  grep -q "the network link between rank" "$err" || fail "rank $rank does not say a link failed" "$err"
done
# Some rank's receiving end saw the slot cut short (its log says so, whoever was told first).
errs=("$E2E_TMP/err" "$E2E_TMP"/err.[0-9])
grep -q "receiving from rank 1 over .*in the middle of a slot" "${errs[@]}" ||
  fail "no rank's receiving end saw the connection end in the middle of a slot" "${errs[@]}"
fault_to_error "$error_bound_ms" "$E2E_TMP/err" 4
((took_ms < bound_ms)) || fail "the run took ${took_ms} ms, over ${bound_ms} ms" "${errs[@]}"
echo "PASS [$E2E_NAME]: every rank failed naming the link, at most ${FAULT_MAX_MS} ms after" \
  "the fault; ${took_ms} ms for the whole run"
