# shellcheck shell=bash
# Sourced by each phase of scripts/gpu-check (scripts/lib/gpucheck/<phase>.sh): runs its cases
# inside the phase's time and records a verdict for each (record.py), which summary.py turns into
# summary.json and summary.txt. scripts/gpu-check exports what these read:
#   GC_LIB    this folder               GC_BIN, GC_LIBDIR  the binaries and libnccl.so.2
#   GC_WORK   logs and dumps            GC_CASES           the verdicts, one JSON object a line
#   GC_PHASE  the phase's name          GC_DEADLINE        when its time is up (seconds since 1970)
#   GC_EMULATED  1 on the emulated GPU, else 0
set -uo pipefail

# gc_json TEXT: TEXT as a JSON string on one line: bytes that are not UTF-8 and control characters
# dropped, each run of white space one space.
gc_json() {
  local s
  s=$(printf '%s' "$1" | iconv -c -f UTF-8 -t UTF-8 | tr -s '\t\n\r ' ' ' | tr -d '\000-\037')
  s=${s# }
  s=${s% }
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}

# gc_record NAME VERDICT DETAIL [SECONDS] [KIND] [LOG]: one verdict, also printed. VERDICT is
# PASS, FAIL, SKIP (the test itself found it does not apply here), INFO (a fact), NOT RUN (nothing
# to compare with, or no tool to check with, here) or INCOMPLETE (its time ran out before it ran).
# KIND is check (what must hold), goal (a target of speed) or info (a fact), the last by default
# for INFO. Written here rather than by record.py: a phase records dozens, and a Python start took
# 0.36 s on a slow VM (record.py reads the same lines back).
gc_record() {
  local name=$1 verdict=$2 detail=$3 seconds=${4:-0} kind=${5:-check}
  local verdicts='^(PASS|FAIL|SKIP|INFO|NOT RUN|INCOMPLETE)$'
  [[ -n ${5:-} || $verdict != INFO ]] || kind=info
  if [[ ! $verdict =~ $verdicts || ! $kind =~ ^(check|goal|info)$ ]]; then
    # A verdict no one reads would drop the case: the phase's mistake fails the run instead.
    detail="gc_record was given verdict '$verdict' of kind '$kind': $detail"
    verdict=FAIL kind=check
  fi
  [[ $seconds =~ ^[0-9]+(\.[0-9]+)?$ ]] || seconds=0
  printf '{"phase": %s, "name": %s, "verdict": "%s", "detail": %s, "seconds": %s, "kind": "%s", "log": %s}\n' \
    "$(gc_json "$GC_PHASE")" "$(gc_json "$name")" "$verdict" "$(gc_json "$detail")" "$seconds" \
    "$kind" "$(gc_json "${6:-}")" >>"$GC_CASES"
  printf '  %-4s  %s: %s\n' "$verdict" "$name" "$detail"
}

# What no phase can prove with one GPU: the machine has no second one to reach.
GC_ONE_GPU="no NVLink or PCIe path between GPUs, no CUDA IPC or peer access from one GPU to"
GC_ONE_GPU+=" another (ranks on one GPU share its memory), and no NVIDIA NCCL beside braid with"
GC_ONE_GPU+=" two ranks or more, which it refuses on one GPU"

# The tests of braid_gpu_api_tests that need two GPUs or more (BRAID_REQUIRE_GPUS(2) and up): phase
# multigpu runs them where there are, and phase api leaves them out.
GC_MULTI_GPU_TESTS="GpuProcesses.TwoProcessesOnTwoGpus:GpuProcesses.ThreeProcessesOnThreeGpus"
GC_MULTI_GPU_TESTS+=":GpuCurrentDevice.*:GpuPeerAccess.*:GpuVisibleDevices.*:Flags/GpuSuspend.*"

# gc_scope PROVES CANNOT: the phase's first case, <phase>.scope, an INFO that says what the phase
# proves (on the emulated GPU: correctness alone, its devices being host memory and threads) and
# what it cannot with one GPU, whatever its verdicts.
gc_scope() {
  local proves="proves $1"
  ((!GC_EMULATED)) ||
    proves="on the emulated GPU (host memory and threads) correctness alone; on a GPU it $proves"
  gc_record "$GC_PHASE.scope" INFO "$proves; one GPU cannot prove $2"
}

# gc_last_verdict [NAME]: the verdict recorded last for case NAME, or for any case, in this run.
gc_last_verdict() {
  local line
  if (($#)); then
    line=$(grep -F "\"name\": $(gc_json "$1")," "$GC_CASES" | tail -1)
  else
    line=$(tail -1 "$GC_CASES")
  fi
  sed -nE 's/.*"verdict": "([A-Z ]+)".*/\1/p' <<<"$line"
}

# gc_limit WANT: the seconds a case may take, WANT or what is left of the phase if less.
gc_limit() {
  local left=$((GC_DEADLINE - $(date +%s) - 5))
  ((left < $1)) && echo "$left" || echo "$1"
}

# gc_begin NAME: the case's log (GC_LOG) and flight-recorder folder (GC_FLIGHT), both empty, and
# GC_NOTE, which says whether GPU_CHECK_BREAK breaks it.
gc_begin() {
  GC_LOG="$GC_WORK/logs/$1.log"
  GC_FLIGHT="$GC_WORK/flight/$1"
  GC_NOTE=""
  [[ ${GPU_CHECK_BREAK:-} != "$1" ]] ||
    GC_NOTE="broken on purpose: GPU_CHECK_BREAK preloaded a library whose avg lies"
  mkdir -p "$GC_WORK/logs" "$GC_FLIGHT"
  : >"$GC_LOG"
}

# gc_exec LIMIT COMMAND...: runs COMMAND for at most LIMIT seconds, in a process group of its own
# that a timeout ends whole, its output added to GC_LOG, a flight-recorder dump of any failed call
# put in GC_FLIGHT; returns its status (124 or 137: timed out). A case that GPU_CHECK_BREAK names
# runs with tests/verdict's lying library preloaded, whose all-reduce returns each rank's own input
# for avg (tests/verdict/gpu_check_verdict.sh).
gc_exec() {
  local limit=$1
  shift
  local env=(BRAID_FLIGHT_RECORDER="$GC_FLIGHT")
  [[ -z $GC_NOTE ]] || env+=(LD_PRELOAD="$GC_LIBDIR/libbraid_lying_nccl.so")
  env "${env[@]}" timeout -k 10 "$limit" "$@" >>"$GC_LOG" 2>&1
}

# gc_run NAME WANT COMMAND...: runs COMMAND as case NAME for at most WANT seconds (less where the
# phase has less left). Sets GC_RC, GC_SECONDS and GC_LIMIT. Returns 1 without running it, the
# case recorded INCOMPLETE, when the phase has under 10 s left: a case never run has checked
# nothing, and the run that left it out cannot pass.
gc_run() {
  local name=$1
  GC_LIMIT=$(gc_limit "$2")
  shift 2
  if ((GC_LIMIT < 10)); then
    gc_record "$name" INCOMPLETE "not run: the phase's time ran out"
    return 1
  fi
  gc_begin "$name"
  local start=$EPOCHREALTIME
  gc_exec "$GC_LIMIT" "$@"
  GC_RC=$?
  GC_SECONDS=$(gc_since "$start")
  return 0
}

gc_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# gc_timed_out: whether the last gc_run's command ran out of its time.
gc_timed_out() { ((GC_RC == 124 || GC_RC == 137)); }

# gc_finish NAME VERDICT DETAIL [KIND]: records the last gc_run's case. A failed case keeps its
# flight-recorder dumps and adds braid-doctor's verdict on them to the detail; a case that passed
# drops them (tests that abort or time out on purpose leave dumps too).
gc_finish() {
  local name=$1 verdict=$2 detail=$3 kind=${4:-check}
  if [[ $verdict == FAIL ]]; then
    detail+="$(gc_fail_note)"
    echo "    --- the end of ${GC_LOG#"$GC_WORK"/}:"
    tail -n 6 "$GC_LOG" | cut -c1-200 | sed 's/^/    /'
  else
    rm -rf "$GC_FLIGHT"
  fi
  gc_record "$name" "$verdict" "$detail" "$GC_SECONDS" "$kind" "${GC_LOG#"$GC_WORK"/}"
}

# gc_fail_note: what a failed case's detail ends with: that it was broken on purpose, if it was,
# and where the case's flight-recorder dumps are, with braid-doctor's verdict on them.
gc_fail_note() {
  [[ -z $GC_NOTE ]] || echo -n " ($GC_NOTE)"
  local dumps
  dumps=$(find "$GC_FLIGHT" -name 'braid-flight-*.txt' 2>/dev/null | wc -l)
  if ((dumps == 0)); then
    rm -rf "$GC_FLIGHT"
    return
  fi
  timeout 30 "$GC_BIN/braid-doctor" "$GC_FLIGHT" >"$GC_FLIGHT/doctor.txt" 2>&1
  local verdict
  verdict=$(grep -m1 '^verdict:' "$GC_FLIGHT/doctor.txt" | cut -c1-160)
  echo -n "; $dumps flight-recorder dump(s) in ${GC_FLIGHT#"$GC_WORK"/}/"
  echo -n "${verdict:+, doctor: $verdict}"
}

# A test that skips for want of any device at all fails: preflight found one. (A test that needs
# more GPUs than there are may skip.)
GC_FAIL_SKIPS='no CUDA device|no emulated GPU|, has 0'

# gc_gtest NAME WANT BINARY FILTER [each]: runs the tests of BINARY that FILTER selects and
# records a case per test (record.py gtest), named NAME.<Suite.Test>. All in one process, or, with
# "each", one process per test as ctest runs them: a test that forks its ranks must start from a
# process that has not used the GPU, and some tests use it on purpose.
gc_gtest() {
  local name=$1 want=$2 bin=$3 filter=$4 each=${5:-}
  if [[ ! -x $bin ]]; then
    gc_record "$name" FAIL "missing: $bin"
    return
  fi
  local list="$GC_WORK/logs/$name.list" notrun="the run ended before it"
  mkdir -p "$GC_WORK/logs"
  "$bin" --gtest_list_tests --gtest_filter="$filter" >"$list" 2>&1
  if [[ -z $each ]]; then
    gc_run "$name" "$want" "$bin" --gtest_filter="$filter" --gtest_color=no || return 0
  else
    GC_LIMIT=$(gc_limit "$want")
    gc_begin "$name"
    local start=$EPOCHREALTIME end=$(($(date +%s) + GC_LIMIT)) test left rc
    GC_RC=0
    for test in $(python3 "$GC_LIB/record.py" list "$list"); do
      left=$((end - $(date +%s)))
      if ((left < 10)); then
        notrun="the group's $GC_LIMIT s ran out before it"
        ((GC_LIMIT >= want)) || notrun="the phase's time ran out before it"
        break
      fi
      gc_exec "$left" "$bin" --gtest_filter="$test" --gtest_color=no
      rc=$?
      ((GC_RC != 0)) || GC_RC=$rc  # the first failure's status
    done
    GC_SECONDS=$(gc_since "$start")
  fi
  # The note goes on the failed tests' details; the dumps stay only where a test failed.
  local status note before
  note=$(gc_fail_note)
  before=$(wc -l <"$GC_CASES")
  python3 "$GC_LIB/record.py" gtest "$GC_CASES" --phase "$GC_PHASE" --group "$name" \
    --list "$list" --log "$GC_LOG" --log-name "${GC_LOG#"$GC_WORK"/}" --rc "$GC_RC" \
    --limit "$GC_LIMIT" --note "$note" --fail-skips "$GC_FAIL_SKIPS" --not-run "$notrun"
  status=$?
  local passed skipped
  passed=$(grep -cE '^\[ +OK +\] [^ ]+ \(' "$GC_LOG")
  skipped=$(grep -cE '^\[  SKIPPED \] [^ ]+ \(' "$GC_LOG")
  if ((status != 0 && status != 1 && status != 3)) || (($(wc -l <"$GC_CASES") == before)); then
    # record.py's own error (2), or it was killed, or it recorded nothing: the group's cases may
    # not all be there, so the group fails here, as a whole.
    gc_record "$name" FAIL "record.py could not read the group's output (exit status $status)" \
      "$GC_SECONDS" check "${GC_LOG#"$GC_WORK"/}"
  elif ((status == 3)); then
    rm -rf "$GC_FLIGHT"
    echo "  INCOMPLETE  $name: $passed passed, $skipped skipped in ${GC_SECONDS} s;" \
      "not run: $notrun"
  elif ((status != 0)); then
    echo "  FAIL  $name: $passed passed, $skipped skipped in ${GC_SECONDS} s; failed:"
    grep -E '^\[  FAILED  \] [^ ]+ \(' "$GC_LOG" | head -20 | sed 's/^/    /'
    gc_timed_out && echo "    and a run did not finish within its time"
    [[ -z $note ]] || echo "   $note"
  else
    rm -rf "$GC_FLIGHT"
    echo "  PASS  $name: $passed passed, $skipped skipped in ${GC_SECONDS} s"
  fi
}
