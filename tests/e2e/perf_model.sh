#!/usr/bin/env bash
# braid-perf --model: each row gets one more column after nccl-tests' thirteen, the cost model's
# estimate of that row's call (ncclGroupSimulateEnd), announced by a '# model:' header line. For
# all_reduce and sendrecv over two processes: every row has the column, a positive number of
# microseconds, larger for the largest size than for the smallest, and #wrong is 0 (N/A in place
# for sendrecv, as without --model). Without --model the table keeps its thirteen columns, so the
# scripts that read them by position (bench/compare-*.sh, the other e2e tests) are unaffected.
#
# usage: perf_model.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
perf=$1
out=$E2E_TMP/out err=$E2E_TMP/err
min=8 max=1048576 factor=32

for coll in all_reduce sendrecv; do
  in_place_wrong=0
  [[ $coll == sendrecv ]] && in_place_wrong=N/A
  run_perf "$out" "$err" "$perf" "$coll" --procs 2 -b "$min" -e "$max" -f "$factor" --model
  expect_success "$out" "$err"
  grep -q "^# model: ncclGroupSimulateEnd's estimate of each call" "$out" ||
    fail "$coll: no '# model: ncclGroupSimulateEnd's estimate ...' header line" "$out"
  awk '/^# +size / && $NF == "model" { found = 1 } END { exit !found }' "$out" ||
    fail "$coll: the column heading line does not end with 'model'" "$out"
  # A row: size count type redop root, time algbw busbw #wrong twice, then the model.
  awk '!/^#/ && NF > 0 && NF != 14' "$out" >"$E2E_TMP/bad"
  [[ ! -s $E2E_TMP/bad ]] || fail "$coll: rows without exactly 14 columns" "$E2E_TMP/bad" "$out"
  awk -v inplace="$in_place_wrong" '!/^#/ && NF == 14 &&
    ($9 != "0" || $13 != inplace || $14 !~ /^[0-9]+\.[0-9]+$/ || $14 + 0 <= 0)' "$out" \
    >"$E2E_TMP/bad"
  [[ ! -s $E2E_TMP/bad ]] ||
    fail "$coll: rows whose #wrong is not 0 / $in_place_wrong or whose model is not positive" \
      "$E2E_TMP/bad" "$out"
  got=$(awk '!/^#/ && NF == 14 { print $1 }' "$out" | tr '\n' ' ')
  want=$(expected_sizes "$min" "$max" "$factor" 4 | tr '\n' ' ')
  [[ $got == "$want" ]] || fail "$coll: row sizes are [$got], expected [$want]" "$out"
  awk '!/^#/ && NF == 14 { if (!seen++) first = $14; last = $14 }
       END { exit !(last + 0 > first + 0) }' "$out" ||
    fail "$coll: the model's estimate for the largest size is not above the smallest's" "$out"
  grep -q '^# Wrong elements *: 0 OK' "$out" ||
    fail "$coll: no '# Wrong elements : 0 OK' line" "$out"
done

run_perf "$out" "$err" "$perf" all_reduce --procs 2 -b "$min" -e "$min" -n 1 -w 0
expect_success "$out" "$err"
if grep -q '^# model:' "$out"; then fail "without --model: a '# model:' header line" "$out"; fi
awk '!/^#/ && NF > 0 && NF != 13' "$out" >"$E2E_TMP/bad"
[[ ! -s $E2E_TMP/bad ]] ||
  fail "without --model: rows without nccl-tests' 13 columns" "$E2E_TMP/bad" "$out"
echo "PASS [$E2E_NAME]: all_reduce and sendrecv with a positive model column, #wrong 0"
