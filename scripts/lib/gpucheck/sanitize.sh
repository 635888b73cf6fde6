#!/usr/bin/env bash
# scripts/gpu-check's phase sanitize: compute-sanitizer's memcheck (out-of-bounds and misaligned
# accesses, faults), synccheck (barriers used wrongly) and racecheck (shared-memory hazards), each
# on every collective in turn, at 4 KiB (LL) and 1 MiB (Simple), on two ranks of the one GPU, each
# a process under a sanitizer of its own (rank_processes.sh): one case a tool, so that each
# sanitizer starts once, not once a collective. memcheck first, since it finds the most; racecheck,
# the slowest, last. The emulated GPU's kernels are host code: ASan, UBSan and TSan check them
# (scripts/sanitize), and this phase skips.
source "$(dirname "${BASH_SOURCE[0]}")/record.sh"

gc_scope "that the engine's kernels of two ranks sharing the GPU read and write only their own \
buffers and FIFOs, and use barriers and shared memory without hazards, in every collective" \
"$GC_ONE_GPU; so no sanitizer sees a kernel's accesses to another GPU's memory"
tools=(memcheck synccheck racecheck)
colls=all_reduce,all_gather,reduce_scatter,broadcast,reduce,alltoall,sendrecv,gather,scatter
# Without compute-sanitizer, or with one that refuses the device, nothing is checked: NOT RUN,
# which the summary counts apart from PASS and SKIP.
if ((GC_EMULATED)); then
  for tool in "${tools[@]}"; do
    why="the emulated GPU's kernels are host code, which scripts/sanitize checks"
    gc_record "sanitize.$tool" "NOT RUN" "compute-sanitizer checks a real GPU's kernels; $why"
  done
  exit 0
fi
if ! command -v compute-sanitizer >/dev/null; then
  if [[ -x /usr/local/cuda/bin/compute-sanitizer ]]; then
    export PATH="$PATH:/usr/local/cuda/bin"
  else
    gc_record sanitize.tools "NOT RUN" "compute-sanitizer not found (PATH, /usr/local/cuda/bin)"
    exit 0
  fi
fi
for tool in "${tools[@]}"; do
  name=sanitize.$tool
  gc_run "$name" 40 "$GC_LIB/rank_processes.sh" 2 shared "$GC_ROOT" compute-sanitizer \
    --tool "$tool" --error-exitcode 86 --print-limit 20 "$GC_BIN/braid-perf" "$colls" -b 4K \
    -e 1M -f 256 -n 1 -w 0 -c 1 || continue
  errors=$(grep -o 'ERROR SUMMARY: [0-9]* error' "$GC_LOG" | grep -v ': 0 error' | head -1)
  # Each rank's sanitizer must say it found nothing (rank_processes.sh prefixes each rank's
  # lines; racecheck may sum up as RACECHECK SUMMARY), or the case has not been checked.
  clean=$(grep -E '^\[rank [01]\] =+ (ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)' \
    "$GC_LOG" | cut -d] -f1 | sort -u | wc -l)
  tables=$(grep -c '^\[rank 0\] # Wrong elements *: *0 OK' "$GC_LOG")
  # The tool refusing the device says nothing of braid: seen under gVisor (docs/gpu-check.md).
  refused=$(grep -m1 -E 'Device not supported|Unable to (attach|connect)' "$GC_LOG")
  if [[ -n $refused ]]; then
    gc_finish "$name" "NOT RUN" "compute-sanitizer cannot check this machine: ${refused:0:120}"
    gc_record sanitize.rest "NOT RUN" "compute-sanitizer refused the device"
    exit 0
  elif gc_timed_out && ((GC_LIMIT < 40)); then
    gc_finish "$name" INCOMPLETE "the phase's time ran out after $GC_LIMIT s of it"
  elif gc_timed_out; then
    gc_finish "$name" FAIL "did not finish within $GC_LIMIT s"
  elif ((GC_RC != 0)); then
    first=$(grep -m1 -E '========= (Invalid|Race|Barrier|Program hit)|braid-perf: ' "$GC_LOG" |
      cut -c1-160)
    gc_finish "$name" FAIL "exit status $GC_RC${errors:+; $errors}: $first"
  elif ((clean != 2)); then
    gc_finish "$name" FAIL "exit status 0, yet $clean of the 2 ranks' sanitizers said 0 errors"
  elif ((tables != 9)); then
    gc_finish "$name" FAIL "rank 0 printed $tables tables with 0 wrong elements, not the 9 of 9"
  else
    gc_finish "$name" PASS "9 collectives, both ranks' sanitizers clean, 0 wrong elements"
  fi
done
exit 0
