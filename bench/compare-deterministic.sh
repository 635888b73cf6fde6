#!/usr/bin/env bash
# What BRAID_DETERMINISTIC=1 costs: braid-perf all_reduce with each algorithm
# forced, with and without the mode, in alternating runs; prints the median
# time of REPEAT runs of each and the ratio as a Markdown table.
#
# usage: bench/compare-deterministic.sh [ranks] [sizes...]  (default: 4; 8 64K 1M 16M)
# env:   BUILD (default build), REPEAT (default 5), ALGOS (default "ring tree oneshot")
set -euo pipefail
source "$(dirname "$0")/../scripts/lib/common.sh"
source "$(dirname "$0")/lib.sh"
BUILD="${BUILD:-$BRAID_BUILD}"
NRANKS="${1:-4}"
shift || true
SIZES=("$@")
((${#SIZES[@]})) || SIZES=(8 65536 1048576 16777216)
REPEAT="${REPEAT:-5}"
read -r -a ALGOS <<<"${ALGOS:-ring tree oneshot}"

braid_install_deps
BRAID_BUILD="$BUILD" braid_build braid-perf >/dev/null
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

iters_for() { if (($1 >= 1048576)); then echo 20; else echo 500; fi; }

echo "$NRANKS ranks on $(nproc) cores, float32 sum, median of $REPEAT alternating runs ($(date -u +%F))."
echo "One-shot takes at most 64 KiB; above, BRAID_ALGO=oneshot runs the ring."
echo
echo "| algorithm | size | normal (us) | deterministic (us) | deterministic / normal |"
echo "| --- | ---: | ---: | ---: | ---: |"
for algo in "${ALGOS[@]}"; do
  for size in "${SIZES[@]}"; do
    n=() d=()
    it="$(iters_for "$size")"
    for ((rep = 0; rep < REPEAT; ++rep)); do
      BRAID_ALGO="$algo" BRAID_PROTO=simple "$BUILD/bin/braid-perf" all_reduce --procs "$NRANKS" \
        -b "$size" -e "$size" -n "$it" -w 5 -c 1 >"$tmp/normal.txt"
      BRAID_ALGO="$algo" BRAID_PROTO=simple BRAID_DETERMINISTIC=1 "$BUILD/bin/braid-perf" \
        all_reduce --procs "$NRANKS" -b "$size" -e "$size" -n "$it" -w 5 -c 1 >"$tmp/det.txt"
      n+=("$(time_of "$tmp/normal.txt" "$size")")
      d+=("$(time_of "$tmp/det.txt" "$size")")
    done
    awk -v a="$algo" -v s="$size" -v n="$(median "${n[@]}")" -v d="$(median "${d[@]}")" 'BEGIN {
      printf("| %s | %d B | %.2f | %.2f | %.2f |\n", a, s, n, d, n > 0 ? d / n : 0);
    }'
  done
done
