#!/usr/bin/env bash
# braid's all_reduce next to OpenMPI's MPI_Allreduce, measured in one run.
#
# For each rank count, runs braid-perf (processes started by --procs) and the
# OpenMPI peer (bench/peers/mpi_allreduce_perf.c under mpirun) over the same
# sizes, float32 sum, same iteration counts, and prints a Markdown table of
# time and busbw at 8 B, 1 MiB and 64 MiB with the ratio braid / MPI.
#
# usage: bench/compare-mpi.sh [ranks...]      (default: 2 4)
# env:   ITERS (default 20), WARMUP (default 5), BUILD (default build)
set -euo pipefail
source "$(dirname "$0")/../scripts/lib/common.sh"
BUILD="${BUILD:-$BRAID_BUILD}"
ITERS="${ITERS:-20}"
WARMUP="${WARMUP:-5}"
RANKS=("$@")
((${#RANKS[@]})) || RANKS=(2 4)
SIZES=(8 1048576 67108864)

braid_install_deps
BRAID_BUILD="$BUILD" braid_build braid-perf mpi-allreduce-perf >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Column 1 is the size in bytes; braid-perf prints out-of-place time and
# busbw in columns 6 and 8, the MPI peer likewise.
row_for() {  # file size -> "time busbw"
  awk -v s="$2" '$1 == s { print $6, $8; exit }' "$1"
}

echo "| ranks | size | braid time (us) | MPI time (us) | braid busbw (GB/s) | MPI busbw (GB/s) | busbw ratio braid/MPI | time ratio MPI/braid |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for n in "${RANKS[@]}"; do
  for size in "${SIZES[@]}"; do
    "$BUILD/bin/braid-perf" all_reduce --procs "$n" -b "$size" -e "$size" -n "$ITERS" \
      -w "$WARMUP" -c 1 >"$tmp/braid.txt"
    mpirun --oversubscribe -np "$n" "$BUILD/bin/mpi-allreduce-perf" -b "$size" -e "$size" \
      -n "$ITERS" -w "$WARMUP" >"$tmp/mpi.txt" 2>/dev/null
    read -r bt bb < <(row_for "$tmp/braid.txt" "$size")
    read -r mt mb < <(row_for "$tmp/mpi.txt" "$size")
    awk -v n="$n" -v s="$size" -v bt="$bt" -v bb="$bb" -v mt="$mt" -v mb="$mb" 'BEGIN {
      label = s >= 1048576 ? sprintf("%d MiB", s / 1048576) : sprintf("%d B", s);
      br = mb > 0 ? sprintf("%.2f", bb / mb) : "n/a";
      tr = bt > 0 ? sprintf("%.2f", mt / bt) : "n/a";
      printf("| %d | %s | %.2f | %.2f | %.2f | %.2f | %s | %s |\n", n, label, bt, mt, bb, mb, br, tr);
    }'
  done
done
