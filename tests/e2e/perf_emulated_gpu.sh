#!/usr/bin/env bash
# braid-perf on GPU communicators of the emulated GPU: with BRAID_EMULATE_GPUS=<n> it allocates
# its buffers in (emulated) device memory as nccl-tests does, its header names each rank's device
# ("on device d: emulated GPU d", rank r on device r % n), and every row has #wrong 0.
# COLLECTIVE may be a comma-separated list, run in one process: each of its tables is checked.
# With -R 2 the header must say how many of the ranks' symmetric windows the library made.
#
# usage: perf_emulated_gpu.sh BRAID_PERF NDEVICES NRANKS COLLECTIVE[,...] [more braid-perf flags...]
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -ge 4 ]] || fail "usage: $0 BRAID_PERF NDEVICES NRANKS COLLECTIVE [flags...]"
perf=$1 ndev=$2 nranks=$3 coll=$4
shift 4
IFS=, read -r -a colls <<<"$coll"
((${#colls[@]} == 1)) || E2E_RUN_LIMIT_S=$((E2E_RUN_LIMIT_S + 20 * (${#colls[@]} - 1)))

export BRAID_EMULATE_GPUS=$ndev
run_perf "$E2E_TMP/out" "$E2E_TMP/err" "$perf" "$coll" "$@"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
for ((r = 0; r < nranks; ++r)); do
  d=$((r % ndev))
  grep -Eq "^#  Rank +$r Group +0 Pid +[0-9]+ on device +$d: emulated GPU $d$" "$E2E_TMP/out" ||
    fail "the header does not put rank $r on emulated GPU $d" "$E2E_TMP/out"
done
grep -q "^#  devices through emulated GPU" "$E2E_TMP/out" ||
  fail "the header does not say the devices are emulated" "$E2E_TMP/out"
rows=$(grep -vc '^#' "$E2E_TMP/out" || true)
[[ $rows -gt 0 ]] || fail "no rows" "$E2E_TMP/out"
tables=$(grep -c '^# braid-perf ' "$E2E_TMP/out" || true)
((tables == ${#colls[@]})) || fail "$tables tables printed, expected ${#colls[@]}" "$E2E_TMP/out"
if [[ " $* " == *" -R 2 "* ]]; then
  grep -Eq "^# Buffers: ncclMemAlloc, registered as symmetric windows \(-R 2\): [0-9]+ of $((2 * nranks)) made" \
    "$E2E_TMP/out" || fail "-R 2: the header does not say how many symmetric windows were made" "$E2E_TMP/out"
fi
oks=$(grep -c "^# Wrong elements       : 0 OK" "$E2E_TMP/out" || true)
((oks == tables)) || fail "some elements are wrong ($oks of $tables tables OK)" "$E2E_TMP/out"
echo "PASS [$E2E_NAME]: $coll on $nranks ranks over $ndev emulated GPUs, $rows rows, #wrong 0"
