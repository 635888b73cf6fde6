#!/usr/bin/env bash
# Does braid's default selection beat the plain ring? For each size, runs in
# turn braid-perf with the default selection, braid-perf with
# BRAID_ALGO=ring BRAID_PROTO=simple, and OpenMPI's MPI_Allreduce (the peer in
# bench/peers), all float32 sum on the same ranks, and prints the median of
# REPEAT alternating runs of each as a Markdown table.
#
# usage: bench/compare-selection.sh [ranks] [sizes...]   (default: 4, 8 bytes)
# env:   BUILD (default build), REPEAT (default 7), ITERS (default 1000)
set -euo pipefail
source "$(dirname "$0")/../scripts/lib/common.sh"
source "$(dirname "$0")/lib.sh"
BUILD="${BUILD:-$BRAID_BUILD}"
NRANKS="${1:-4}"
shift || true
SIZES=("$@")
((${#SIZES[@]})) || SIZES=(8)
REPEAT="${REPEAT:-7}"
ITERS="${ITERS:-1000}"

braid_install_deps
BRAID_BUILD="$BUILD" braid_build braid-perf mpi-allreduce-perf >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# What the default selection ran, from the INFO line braid-perf's rank 0 prints.
chosen() {
  BRAID_DEBUG=INFO BRAID_TRACE="$tmp/trace-%r.json" "$BUILD/bin/braid-perf" all_reduce \
    --procs "$NRANKS" -b "$1" -e "$1" -n 1 -w 0 -c 0 >/dev/null 2>&1 || true
  # braid-perf runs small all_reduces of its own: take the call of this size.
  grep -o '"algorithm":"[a-z]*","protocol":"[a-z]*","channels":[0-9]*,"count":[0-9]*,"datatype":"float","bytes":'"$1"'[,}]' \
    "$tmp/trace-0.json" | head -1 |
    sed 's/"algorithm":"\([a-z]*\)","protocol":"\([a-z]*\)".*/\1\/\2/'
}

echo "$NRANKS ranks on $(nproc) cores, float32 sum, $ITERS iterations, median of $REPEAT"
echo "alternating runs of each column ($(date -u +%F))."
echo
echo "| size | default choice | braid default (us) | braid ring/simple (us) | OpenMPI (us) | ring/simple / default |"
echo "| ---: | --- | ---: | ---: | ---: | ---: |"
for size in "${SIZES[@]}"; do
  d=() r=() m=()
  for ((rep = 0; rep < REPEAT; ++rep)); do
    "$BUILD/bin/braid-perf" all_reduce --procs "$NRANKS" -b "$size" -e "$size" -n "$ITERS" \
      -w 100 -c 1 >"$tmp/default.txt"
    BRAID_ALGO=ring BRAID_PROTO=simple "$BUILD/bin/braid-perf" all_reduce --procs "$NRANKS" \
      -b "$size" -e "$size" -n "$ITERS" -w 100 -c 1 >"$tmp/ring.txt"
    mpirun --oversubscribe -np "$NRANKS" "$BUILD/bin/mpi-allreduce-perf" -b "$size" -e "$size" \
      -n "$ITERS" -w 100 >"$tmp/mpi.txt" 2>/dev/null
    d+=("$(time_of "$tmp/default.txt" "$size")")
    r+=("$(time_of "$tmp/ring.txt" "$size")")
    m+=("$(time_of "$tmp/mpi.txt" "$size")")
  done
  awk -v s="$size" -v c="$(chosen "$size")" -v d="$(median "${d[@]}")" \
      -v r="$(median "${r[@]}")" -v m="$(median "${m[@]}")" 'BEGIN {
    printf("| %d B | %s | %.2f | %.2f | %.2f | %.2f |\n", s, c, d, r, m, d > 0 ? r / d : 0);
  }'
done
