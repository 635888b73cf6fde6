#!/usr/bin/env bash
# braid-perf all_reduce over several ranks: it exits 0, its header lists every rank, and its table
# has one row per size of the sweep with #wrong 0 in both columns.
#
# usage: perf_table.sh BRAID_PERF NRANKS MINBYTES MAXBYTES FACTOR [more braid-perf flags...]
# (sizes in plain bytes; the data type is float, so one element is 4 bytes)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -ge 5 ]] || fail "usage: $0 BRAID_PERF NRANKS MINBYTES MAXBYTES FACTOR [flags...]"
perf=$1 nranks=$2 min=$3 max=$4 factor=$5
shift 5

run_perf "$E2E_TMP/out" "$E2E_TMP/err" \
  "$perf" all_reduce -b "$min" -e "$max" -f "$factor" -d float "$@"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
check_table "$E2E_TMP/out" "$nranks" "$min" "$max" "$factor" 4
echo "PASS [$E2E_NAME]: $nranks ranks, $(grep -vc '^#' "$E2E_TMP/out") rows, #wrong 0"
