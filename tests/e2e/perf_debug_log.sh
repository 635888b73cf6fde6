#!/usr/bin/env bash
# BRAID_DEBUG=INFO: braid-perf over two processes logs, on stderr, the configuration it read from
# the environment ("config:"), the ring it built with the transport it chose (shm, both ranks on
# this machine), and every line a rank logs carries NCCL's "host:pid:tid [rank]" prefix.
#
# usage: perf_debug_log.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
out=$E2E_TMP/out err=$E2E_TMP/err

BRAID_DEBUG=INFO run_perf "$out" "$err" "$1" all_reduce --procs 2 -b 8 -e 8 -n 1 -w 0
expect_success "$out" "$err"

# host:pid:tid [rank] braid INFO
prefix='^[^: ]+:[0-9]+:[0-9]+ \[[0-9]+\] braid INFO '
grep -Eq "${prefix}config: " "$err" ||
  fail "no 'config:' line with the prefix 'host:pid:tid [rank] braid INFO' on stderr" "$err"
grep -Eq "${prefix}ring: .*transport shm" "$err" ||
  fail "no 'ring:' line naming the transport shm on stderr" "$err"
for rank in 0 1; do
  grep -Eq "^[^: ]+:[0-9]+:[0-9]+ \[$rank\] braid INFO " "$err" ||
    fail "rank $rank logged no line prefixed 'host:pid:tid [$rank] braid INFO'" "$err"
done
# The logs go to stderr only: the table on stdout stays machine-readable.
if grep -q 'braid INFO' "$out"; then fail "INFO log lines on stdout" "$out"; fi
echo "PASS [$E2E_NAME]"
