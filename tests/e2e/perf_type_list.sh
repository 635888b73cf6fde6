#!/usr/bin/env bash
# braid-perf -d and -o with comma-separated lists: every cycle (-N) runs the listed types and
# operators in the order given, each row checked (#wrong 0); a repeated or unknown name, or an
# empty one, is a usage error that runs nothing.
#
# usage: perf_type_list.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
perf=$1
out=$E2E_TMP/out err=$E2E_TMP/err

run_perf "$out" "$err" "$perf" all_reduce -t 2 -b 4096 -e 4096 -n 2 -w 1 -c 1 -N 2 \
  -d bfloat16,float,f8e4m3 -o max,sum
expect_success "$out" "$err"
# Columns 3 and 4 are the type and the operator; column 9 is the out-of-place #wrong.
got=$(awk '!/^#/ { printf "%s/%s ", $3, $4 }' "$out")
want="bfloat16/max bfloat16/sum float/max float/sum f8e4m3/max f8e4m3/sum "
want+="$want"
[[ $got == "$want" ]] || fail "rows ran as '$got', expected '$want'" "$out"
if awk '!/^#/ && ($9 != 0 || $13 != 0) { bad = 1 } END { exit !bad }' "$out"; then
  fail "a row has wrong elements" "$out"
fi

for bad in float,float float, ,float float,nosuchtype; do
  run_perf "$out" "$err" "$perf" all_reduce -t 2 -d "$bad"
  [[ $RUN_RC -ne 0 ]] || fail "'-d $bad' exited 0, expected a usage error" "$out" "$err"
  grep -q '^usage: ' "$err" || fail "'-d $bad' printed no usage message" "$err"
  if grep -q '^# Using devices' "$out"; then fail "'-d $bad' ran a benchmark" "$out"; fi
done
echo "PASS [$E2E_NAME]: lists run in their order every cycle; repeats and empty names refused"
