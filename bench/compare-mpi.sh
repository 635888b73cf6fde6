#!/usr/bin/env bash
# braid's all_reduce next to OpenMPI's MPI_Allreduce, measured in one run.
#
# For each rank count, runs braid-perf (processes started by --procs) and the
# OpenMPI peer (bench/peers/mpi_allreduce_perf.c under mpirun) over the same
# sizes, float32 sum, same iteration counts, and prints a Markdown table of
# time and busbw at 8 B, 1 MiB and 64 MiB with the ratio braid / MPI (a
# ratio above 1 means braid is faster).
#
# Both are placed alike: mpirun binds each rank to a core of its own where there are enough
# (here, N = 2) and leaves them unbound otherwise, and braid-perf --bind core does the same.
#
# A copy loop's rate is the yardstick of the 64 MiB rows, not a limit: memcpy-bw
# (bench/peers/memcpy_bw.c) measures this machine's copy rate M (bytes read plus written per
# second, the faster of glibc memcpy and a loop of non-temporal stores, on 2 threads, 256 MiB)
# just before and after each pair of braid runs of 64 MiB, and the table gives the busbw an
# N-rank all_reduce would reach moving its 2 N S bytes at that rate, M (N - 1) / N^2
# (docs/benchmarks.md derives it), and braid's busbw over it, run by run. Loops with more read
# and write streams a core move more than M, and braid has passed the yardstick. The 1 MiB rows
# have none: their 2 N MiB of buffers run in the caches, which a rate of memory does not describe.
#
# An MPI figure 4x or more away from the median of its repeats in this run is taken again; one
# still 4x away is flagged and listed below the table, and its row gets no ratio.
#
# usage: bench/compare-mpi.sh [ranks...]      (default: 2 4)
# env:   BUILD (default build), REPEAT (runs per figure, default 5; the median is shown),
#        DTYPE_CYCLES (rounds of the types per process in the last table, default 3)
# Iterations per size (both libraries get the same): 1000 at 8 B, where a
# single scheduler hiccup would otherwise dominate the mean, 200 at 1 MiB,
# 20 at 64 MiB.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib/common.sh"
source "$(dirname "$0")/lib.sh"
BUILD="${BUILD:-$BRAID_BUILD}"
RANKS=("$@")
((${#RANKS[@]})) || RANKS=(2 4)
SIZES=(8 1048576 67108864)
REPEAT="${REPEAT:-5}"
declare -A ITERS=([8]=1000 [1048576]=200 [67108864]=20)
declare -A WARMUP=([8]=100 [1048576]=20 [67108864]=5)

braid_install_deps
BRAID_BUILD="$BUILD" braid_build braid-perf mpi-allreduce-perf memcpy-bw >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Column 1 is the size in bytes; braid-perf prints out-of-place time and
# busbw in columns 6 and 8, the MPI peer likewise.
row_for() {  # file size -> "time busbw"
  awk -v s="$2" '$1 == s { print $6, $8; exit }' "$1"
}

# The copy loop's rate, GB/s, measured by memcpy-bw around each pair of braid runs it is the
# yardstick of: on a shared VM it moves by 2x within a minute, and a rate measured long before
# would make braid / yardstick a measure of the neighbours.
copy_rate() {
  "$BUILD/bin/memcpy-bw" 2 | awk '{ print $(NF - 1) }'
}

# The rows of 64 MiB and more get the copy-loop yardstick: N ranks' 2 N S bytes of buffers are
# then far larger than the caches. At 1 MiB they fit the caches, where M says nothing.
YARDSTICK_MIN=67108864
# A peer figure this many times above or below the median of its repeats is taken again.
OFF=4

mpi_run() {  # ranks size -> the MPI peer's table in $tmp/mpi.txt
  mpirun --oversubscribe -np "$1" "$BUILD/bin/mpi-allreduce-perf" -b "$2" -e "$2" \
    -n "${ITERS[$2]}" -w "${WARMUP[$2]}" >"$tmp/mpi.txt" 2>/dev/null
}

size_label() { awk -v s="$1" 'BEGIN { print (s >= 1048576 ? s / 1048576 " MiB" : s " B") }'; }

echo "Each figure is the median of $REPEAT runs; braid and MPI runs alternate, so both see the"
echo "same machine state. Out-of-place, float32 sum, time averaged over ranks."
echo "Copy rate M: memcpy-bw (2 threads, 256 MiB, bytes read + written, the faster of glibc memcpy"
echo "and a non-temporal store loop, one read and one write stream a thread), run just before and"
echo "just after each pair of braid runs of 64 MiB; the mean of the two is those runs' M."
echo "Copy-loop yardstick of an N-rank all_reduce: busbw = M (N - 1) / N^2, its 2 N S bytes (each"
echo "input read once, each output written once) moved at the copy loop's rate. A yardstick, not a"
echo "limit: loops with more streams a core move more than M, and braid has passed it. The"
echo "yardstick column is the median of the runs' yardsticks, braid / yardstick the median of each"
echo "run's busbw over its own. 1 MiB rows have none: they run in the caches, which M does not"
echo "describe."
echo "An MPI figure ${OFF}x or more away from the median of its repeats is taken again; one still"
echo "${OFF}x away is flagged, listed below, and its row has no ratio."
echo
echo "Buffers: malloc'd (what most programs pass), or from ncclMemAlloc (braid-perf -R 1, as"
echo "nccl-tests' -R registers its buffers): host memory the ranks map, which zero-copy reads in place."
echo
echo "| ranks | size | buffers | braid time (us) | MPI time (us) | braid busbw (GB/s) | MPI busbw (GB/s) | busbw ratio braid/MPI | copy-loop yardstick busbw (GB/s) | braid / yardstick |"
echo "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
copy_rates=() flagged=()
for n in "${RANKS[@]}"; do
  for size in "${SIZES[@]}"; do
    iters="${ITERS[$size]}"
    warmup="${WARMUP[$size]}"
    bts=() bbs=() rts=() rbs=() mts=() mbs=() yards=() fbs=() frs=()
    for ((rep = 0; rep < REPEAT; ++rep)); do
      yard=0 before=0
      ((size < YARDSTICK_MIN)) || before="$(copy_rate)"
      "$BUILD/bin/braid-perf" all_reduce --procs "$n" --bind core -b "$size" -e "$size" \
        -n "$iters" -w "$warmup" -c 1 >"$tmp/braid.txt"
      "$BUILD/bin/braid-perf" all_reduce --procs "$n" --bind core -b "$size" -e "$size" \
        -n "$iters" -w "$warmup" -c 1 -R 1 >"$tmp/braid-memalloc.txt"
      if ((size >= YARDSTICK_MIN)); then
        # M before and after the two braid runs, and their mean the yardstick's: the runs took
        # the time between, in whatever state the memory was then.
        after="$(copy_rate)"
        m=$(awk -v a="$before" -v b="$after" 'BEGIN { print (a + b) / 2 }')
        copy_rates+=("$before" "$after")
        yard=$(awk -v m="$m" -v n="$n" 'BEGIN { print m * (n - 1) / (n * n) }')
      fi
      mpi_run "$n" "$size"
      read -r bt bb < <(row_for "$tmp/braid.txt" "$size")
      read -r rt rb < <(row_for "$tmp/braid-memalloc.txt" "$size")
      read -r mt mb < <(row_for "$tmp/mpi.txt" "$size")
      bts+=("$bt") bbs+=("$bb") rts+=("$rt") rbs+=("$rb") mts+=("$mt") mbs+=("$mb")
      yards+=("$yard")
      fbs+=("$(awk -v b="$bb" -v m="$yard" 'BEGIN { print (m > 0 ? b / m : 0) }')")
      frs+=("$(awk -v b="$rb" -v m="$yard" 'BEGIN { print (m > 0 ? b / m : 0) }')")
    done
    # Each MPI time against the median of its repeats: one OFF times away or more is taken
    # again, and one still that far away flags the row.
    mpi_median=$(median "${mts[@]}") stayed=""
    for i in "${!mts[@]}"; do
      off_by "$OFF" "${mts[i]}" "$mpi_median" || continue
      mpi_run "$n" "$size"
      read -r mt mb < <(row_for "$tmp/mpi.txt" "$size")
      if off_by "$OFF" "$mt" "$mpi_median"; then
        stayed+="${stayed:+; }${mts[i]} us, taken again $mt us"
      fi
      mts[i]=$mt mbs[i]=$mb
    done
    mpi_flag=0
    if [[ -n $stayed ]]; then
      mpi_flag=1
      flagged+=("$n ranks, $(size_label "$size"): MPI time $stayed; the median of its repeats\
 $mpi_median us (the repeats now: ${mts[*]})")
    fi
    for buffers in malloc ncclMemAlloc; do
      if [[ $buffers == malloc ]]; then
        bt=$(median "${bts[@]}") bb=$(median "${bbs[@]}") fraction=$(median "${fbs[@]}")
      else
        bt=$(median "${rts[@]}") bb=$(median "${rbs[@]}") fraction=$(median "${frs[@]}")
      fi
      awk -v n="$n" -v s="$size" -v label="$(size_label "$size")" -v buf="$buffers" \
          -v bt="$bt" -v bb="$bb" -v mt="$(median "${mts[@]}")" -v mb="$(median "${mbs[@]}")" \
          -v flag="$mpi_flag" -v yard="$(median "${yards[@]}")" -v f="$fraction" 'BEGIN {
        # At 8 B busbw rounds to 0.00: compare times there (MPI time / braid time).
        r = s < 1024 ? (bt > 0 ? sprintf("%.2f (time)", mt / bt) : "n/a") \
                     : (mb > 0 ? sprintf("%.2f", bb / mb) : "n/a");
        if (flag) r = "- (MPI flagged)";
        mark = flag ? " (flagged)" : "";
        fy = yard > 0 ? sprintf("%.2f | %.2f", yard, f) : "- | -";
        printf("| %d | %s | %s | %.2f | %.2f%s | %.2f | %.2f%s | %s | %s |\n", n, label, buf, bt,
               mt, mark, bb, mb, mark, r, fy);
      }'
    done
  done
done
echo
echo "M per measurement (GB/s): ${copy_rates[*]:-none}; median $(median "${copy_rates[@]:-0}")."
if ((${#flagged[@]})); then
  echo
  echo "Flagged (still ${OFF}x or more from the median of its repeats when taken again):"
  printf -- '- %s\n' "${flagged[@]}"
fi

# Every dtype at float32's bytes per second: at 64 MiB, 2 ranks, ncclMemAlloc buffers, braid's
# busbw for the 16- and 8-bit floats beside float32's (MPI has no bfloat16 to compare), bound to
# cores as above. Each of REPEAT processes runs DTYPE_CYCLES rounds, and a round is float32 and
# then each other type, one after the other in the same process (braid-perf -d with a list): a
# type's ratio is its busbw over that round's float32, measured a moment before on the same
# ranks and buffers, and the table gives the median of every round's. Separate processes had
# paired runs seconds apart, on this VM enough for single ratios to run 0.63-1.55.
DTYPES=(float bfloat16 half f8e4m3)
DTYPE_CYCLES="${DTYPE_CYCLES:-3}"
echo
echo "| ranks | 64 MiB of (ncclMemAlloc buffers) | braid busbw (GB/s) | / float32's (median of rounds) |"
echo "| ---: | --- | ---: | ---: |"
declare -A dtype_busbw dtype_ratio
for ((rep = 0; rep < REPEAT; ++rep)); do
  "$BUILD/bin/braid-perf" all_reduce --procs 2 --bind core -b 67108864 -e 67108864 \
    -n "${ITERS[67108864]}" -w "${WARMUP[67108864]}" -c 1 -R 1 -N "$DTYPE_CYCLES" \
    -d "$(IFS=,; echo "${DTYPES[*]}")" >"$tmp/braid.txt"
  # Rows in order: each cycle's types as listed; column 3 the type, 8 the out-of-place busbw.
  while read -r dtype b; do
    [[ $dtype != float ]] || round_float=$b
    dtype_busbw[$dtype]+=" $b"
    dtype_ratio[$dtype]+=" $(awk -v b="$b" -v f="$round_float" 'BEGIN { print (f > 0 ? b / f : 0) }')"
  done < <(awk '!/^#/ && $1 == 67108864 { print $3, $8 }' "$tmp/braid.txt")
done
for dtype in "${DTYPES[@]}"; do
  awk -v d="$dtype" -v b="$(median ${dtype_busbw[$dtype]})" -v r="$(median ${dtype_ratio[$dtype]})" \
    'BEGIN { printf("| 2 | %s | %.2f | %.2f |\n", d, b, r) }'
done
echo
echo "Rounds' ratios: bfloat16${dtype_ratio[bfloat16]}; half${dtype_ratio[half]};"\
  "f8e4m3${dtype_ratio[f8e4m3]}."
