#!/usr/bin/env bash
# BRAID_DUMP_SCHEDULE=1: every rank prints the schedule it runs ("schedule: rank R of N ...", then
# its steps); a ring all_reduce of two ranks has a recvReduceCopySend step on each. At 8 B the
# default selection takes the one-shot board, which has no schedule and says so.
#
# usage: perf_dump_schedule.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
out=$E2E_TMP/out err=$E2E_TMP/err

BRAID_ALGO=ring BRAID_DUMP_SCHEDULE=1 run_perf "$out" "$err" "$1" all_reduce --procs 2 -b 8 -e 8 \
  -n 1 -w 0
expect_success "$out" "$err"
cat "$out" "$err" >"$E2E_TMP/all"
for rank in 0 1; do
  grep -q "schedule: rank $rank of 2" "$E2E_TMP/all" ||
    fail "no 'schedule: rank $rank of 2' line" "$E2E_TMP/all"
done
grep -q 'recvReduceCopySend' "$E2E_TMP/all" || fail "no recvReduceCopySend step" "$E2E_TMP/all"

BRAID_ALGO=oneshot BRAID_DUMP_SCHEDULE=1 run_perf "$out" "$err" "$1" all_reduce --procs 2 -b 8 -e 8 \
  -n 1 -w 0
expect_success "$out" "$err"
cat "$out" "$err" >"$E2E_TMP/all"
grep -q "rank 0.*one-shot" "$E2E_TMP/all" || fail "no one-shot line" "$E2E_TMP/all"
echo "PASS [$E2E_NAME]"
