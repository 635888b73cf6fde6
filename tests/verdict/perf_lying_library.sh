#!/usr/bin/env bash
# braid-perf's verdict does not rest on the library it measures (issue 31): under lying_nccl.c,
# whose avg returns each rank's own input and whose sums of doubles return zeros, braid-perf's
# table reads "#wrong 0" and "0 OK", yet it must exit non-zero, because every rank checks its own
# output and exits on its own count, and avg inputs differ from rank to rank.
#
# usage: perf_lying_library.sh BRAID_PERF LYING_NCCL_SO
set -euo pipefail
perf=$1 shim=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $1" >&2
  for f in "$tmp"/out "$tmp"/err; do echo "--- $f" >&2; cat "$f" >&2; done
  exit 1
}

rc=0
LD_PRELOAD="$shim${LD_PRELOAD:+ $LD_PRELOAD}" timeout 60 "$perf" all_reduce -b 4096 -e 4096 \
  -d float -o avg --procs 3 -n 1 -w 0 >"$tmp/out" 2>"$tmp/err" || rc=$?
[[ $rc -ne 0 ]] || fail "braid-perf exited 0 under a library whose avg returns its input"
[[ $rc -ne 124 ]] || fail "braid-perf did not finish within 60 s"
# The lie worked: braid's sum of the counts said nothing was wrong...
grep -q '^# Wrong elements *: 0 OK' "$tmp/out" || fail "the shim did not take: no '0 OK' line"
# ...and the ranks whose inputs differ from the mean (0 and 2 of 3) said otherwise, themselves.
for rank in 0 2; do
  grep -q "^braid-perf: rank $rank: [0-9]* wrong elements after ncclAllReduce" "$tmp/err" ||
    fail "rank $rank did not report its own wrong elements"
done
echo "PASS: exit status $rc although the table read 0 OK; ranks 0 and 2 counted their own"
