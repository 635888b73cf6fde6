#!/usr/bin/env bash
# A bad command line: braid-perf exits non-zero, says what is wrong with a usage message on
# stderr, and runs nothing (no table).
#
# usage: perf_bad_flag.sh BRAID_PERF ARGS...
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -ge 2 ]] || fail "usage: $0 BRAID_PERF ARGS..."
perf=$1
shift
out=$E2E_TMP/out err=$E2E_TMP/err

run_perf "$out" "$err" "$perf" "$@"
[[ $RUN_RC -ne 0 ]] || fail "'braid-perf $*' exited 0, expected a failure" "$out" "$err"
grep -q '^usage: ' "$err" || fail "'braid-perf $*' printed no usage message on stderr" "$err"
if grep -q '^# Using devices' "$out"; then fail "'braid-perf $*' ran a benchmark" "$out"; fi
echo "PASS [$E2E_NAME]: 'braid-perf $*' exited $RUN_RC with a usage message"
