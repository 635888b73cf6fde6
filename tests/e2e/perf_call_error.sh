#!/usr/bin/env bash
# A call that braid refuses: braid-perf exits non-zero and, on stderr, names the rank and the call
# that failed with the library's own explanation (ncclGetLastError), instead of a table or a hang.
#
# usage: perf_call_error.sh BRAID_PERF CALL MESSAGE ARGS...
# (CALL: the NCCL function braid-perf reports, e.g. ncclGather; MESSAGE: a fixed string expected in
# the library's error text; ARGS: braid-perf's arguments)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -ge 4 ]] || fail "usage: $0 BRAID_PERF CALL MESSAGE ARGS..."
perf=$1 call=$2 message=$3
shift 3
out=$E2E_TMP/out err=$E2E_TMP/err

run_perf "$out" "$err" "$perf" "$@"
[[ $RUN_RC -ne 0 ]] || fail "'braid-perf $*' exited 0, expected a failure" "$out" "$err"
grep -E "^braid-perf: rank [0-9]+: $call .*failed: " "$err" | grep -qF "$message" ||
  fail "no 'braid-perf: rank R: $call ... failed: ...' line with '$message' on stderr" "$err"
if grep -q '^# Wrong elements' "$out"; then fail "'braid-perf $*' finished a table" "$out"; fi
echo "PASS [$E2E_NAME]: 'braid-perf $*' exited $RUN_RC with the library's error"
