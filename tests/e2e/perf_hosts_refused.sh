#!/usr/bin/env bash
# A run across hosts of one machine (lib.sh's run_on_hosts) that braid must refuse: rank 0 exits
# nonzero and its output says why.
#
# usage: perf_hosts_refused.sh BRAID_PERF HOSTS NRANKS TEXT COLLECTIVE [flags...]
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -ge 5 ]] || fail "usage: $0 BRAID_PERF HOSTS NRANKS TEXT COLLECTIVE [flags...]"
perf=$1 hosts=$2 nranks=$3 text=$4
shift 4
run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" "$hosts" "$nranks" "$perf" "$@"
[[ $RUN_RC -ne 0 ]] || fail "the run succeeded; expected an error saying '$text'" \
  "$E2E_TMP/out" "$E2E_TMP/err"
grep -qF "$text" "$E2E_TMP/err" "$E2E_TMP/out" ||
  fail "rank 0's error does not say '$text'" "$E2E_TMP/out" "$E2E_TMP/err"
echo "PASS [$E2E_NAME]: refused: $text"
