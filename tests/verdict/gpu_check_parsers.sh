#!/usr/bin/env bash
# scripts/gpu-check's verdicts cannot pass without checking (issue 48): fed output they cannot
# read, cut short, or with nothing to compare with, its parsers and phases must say so.
#   - a line of a GoogleTest binary's output that its grammar does not allow fails the group as
#     <group>.output, naming the line (record.py, and the unit phase end to end); a binary that
#     crashes leaves the tests after it INCOMPLETE (the api phase end to end);
#   - a phase cut short by its time leaves its cases INCOMPLETE, and gpu-check exits 3;
#   - a line of a braid-perf table that perf_table.awk cannot read fails its case (the perf phase
#     end to end) and the goal judged on it (perf_goals.py);
#   - a goal or a phase with nothing to compare with is NOT RUN, counted apart from PASS, and a run
#     where nothing else ran says NOT RUN and exits 5; the multigpu phase on one GPU is NOT RUN;
#   - every phase says what one GPU can prove in it (<phase>.scope);
#   - braid is compared with NVIDIA's NCCL on one GPU by no goal, the perf and torch phases saying
#     why (perf.nccl, torch.nccl);
#   - the preflight's first call fails where braid's trace shows no engine kernel launched by
#     both ranks;
#   - summary.py fails the run on a line of cases.jsonl it cannot read.
# The binaries are fakes written here, which print what GoogleTest and braid-perf print: seconds,
# no build. (tests/verdict/gpu_check_verdict.sh runs the real perf phase.)
#
# usage: gpu_check_parsers.sh SCRIPTS/GPU-CHECK
set -euo pipefail
check=$1
lib=$(cd "$(dirname "$check")" && pwd)/lib/gpucheck
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $1" >&2
  [[ ! -f $tmp/out ]] || tail -40 "$tmp/out" >&2
  exit 1
}

# The fake binaries: a GoogleTest binary holding the suites the unit and api phases select, and a
# braid-perf that prints a table. FAKE_BREAK=TEST:HOW,... breaks tests: garble cuts TEST's result
# line short, crash ends the binary inside TEST. braid-perf cuts a row short under
# NCCL_MAX_NCHANNELS=2 (the perf phase's case perf.channels2).
fake=$tmp/fake
mkdir -p "$fake/bin" "$fake/lib"
: >"$fake/lib/libnccl.so.2"
cat >"$fake/bin/fake_gtest" <<'EOF'
#!/usr/bin/env bash
# The engine's tests, or (under braid_gpu_api_tests' name) the API's.
tests=(EngineKernel.Reduce EngineKernel.Copy EngineLl.Wrap)
[[ ${0##*/} != braid_gpu_api_tests ]] || tests=(GpuApi.Init GpuApi.Calls Forced/GpuProtocols.Run/0
  GpuDeterministic.Same Threads/GpuCollectivesMatrix.Case/0 Threads/GpuCollectivesMatrix.Case/1
  Threads/GpuCollectivesMatrix.Case/2 GpuProcesses.Pair GpuLlProcesses.Pair GpuKillTrials.One
  GpuFlightRecorder.Dump Threads/GpuCollectivesMatrixLarge.Case/0 GpuCaptureOrder.Mixed
  GpuCurrentDevice.Kept)
list=0 filter='*'
for arg; do
  case $arg in
    --gtest_list_tests) list=1 ;;
    --gtest_filter=*) filter=${arg#--gtest_filter=} ;;
  esac
done
# GoogleTest's filter: POSITIVE[-NEGATIVE], each a ':' list of globs.
selected() {
  local pos=${filter%%-*} neg="" p
  [[ $filter != *-* ]] || neg=${filter#*-}
  local ok=0
  for p in ${pos//:/ }; do [[ $1 == $p ]] && ok=1; done
  [[ -n $pos ]] || ok=1
  for p in ${neg//:/ }; do [[ $1 == $p ]] && ok=0; done
  ((ok))
}
chosen=()
for t in "${tests[@]}"; do selected "$t" && chosen+=("$t"); done
if ((list)); then
  suite=""
  for t in "${chosen[@]}"; do
    [[ ${t%.*}. == "$suite" ]] || { suite=${t%.*}.; echo "$suite"; }
    echo "  ${t##*.}"
  done
  exit 0
fi
echo "[==========] Running ${#chosen[@]} tests from 1 test suite."
for t in "${chosen[@]}"; do
  echo "[ RUN      ] $t"
  echo "output of $t"
  case ",${FAKE_BREAK:-}," in
    *",$t:garble,"*) echo "[       OK ] $t (1 ms" ;;
    *",$t:crash,"*) exit 134 ;;
    *) echo "[       OK ] $t (1 ms)" ;;
  esac
done
echo "[==========] ${#chosen[@]} tests from 1 test suite ran. (3 ms total)"
echo "[  PASSED  ] ${#chosen[@]} tests."
EOF
cat >"$fake/bin/braid-perf" <<'EOF'
#!/usr/bin/env bash
echo "# braid-perf all_reduce: nccl-tests compatible benchmark of braid's libnccl.so.2"
echo "#  devices through emulated GPU"
# braid's trace of the engine's launches, by both ranks, where FAKE_LAUNCH is set.
if [[ -n ${FAKE_LAUNCH:-} && ${BRAID_DEBUG:-} == TRACE ]]; then
  for rank in 0 1; do echo "vm:1:2 [$rank] braid TRACE gpu: launched 1 call(s) on 1 block(s)"; done
fi
printf '%12s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n' \
  8 2 float sum -1 5.12 0.00 0.00 0 4.80 0.00 0.00 0 \
  1048576 262144 float sum -1 812.33 1.29 1.29 0 800.10 1.31 1.31 0
# A row cut short.
[[ ${NCCL_MAX_NCHANNELS:-} != 2 ]] || echo "     2097152        524288     float    sum    -1    16"
echo "# Wrong elements       : 0 OK"
EOF
chmod +x "$fake/bin/fake_gtest" "$fake/bin/braid-perf"
for name in braid_engine_emulated_tests braid_gpu_api_tests; do
  ln -s fake_gtest "$fake/bin/$name"
done

# summary_cases FILE: "verdict<TAB>exit_status<TAB>counts<TAB>not_run=..." and then
# "name<TAB>verdict<TAB>detail" for every case of summary.json.
summary_cases() {
  python3 - "$1" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
counts = " ".join(f"{k}={v}" for k, v in s["counts"].items())
print(f"{s['verdict']}\t{s['exit_status']}\t{counts}\tnot_run={','.join(s['not_run'])}")
for phase in s["phases"]:
    for case in phase["cases"]:
        print(f"{case['name']}\t{case['verdict']}\t{case['detail']}")
EOF
}

# gpu_check NAME [VAR=VALUE...] -- PHASE...: scripts/gpu-check on the fakes into $tmp/NAME/,
# its cases in $tmp/NAME.txt; sets rc.
gpu_check() {
  local name=$1
  shift
  local env=()
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  rc=0
  env BRAID_EMULATE_GPUS=2 "${env[@]}" OUT="$tmp/$name" GPU_CHECK_WORK="$tmp/work-$name" \
    timeout 120 "$check" --emulated --prebuilt "$fake" "$@" >"$tmp/out" 2>&1 || rc=$?
  [[ -f $tmp/$name/summary.json ]] || fail "$name: no summary.json (exit status $rc)"
  summary_cases "$tmp/$name/summary.json" >"$tmp/$name.txt"
}

# cases FILE VERDICT: the names of FILE's cases with VERDICT, one a line.
cases() { tail -n +2 "$1" | awk -F'\t' -v v="$2" '$2 == v { print $1 }'; }
# has FILE NAME VERDICT PATTERN: whether FILE's case NAME has VERDICT and a detail PATTERN matches.
has() {
  local line
  line=$(tail -n +2 "$1" | awk -F'\t' -v n="$2" '$1 == n')
  # shellcheck disable=SC2053  # the detail is a pattern
  [[ $line == "$2"$'\t'"$3"$'\t'$4 ]] || { echo "$2: ${line:-no such case}" >&2; return 1; }
}
# case_json NAME VERDICT [KIND] [DETAIL]: a case of phase perf as record.sh writes one.
case_json() {
  printf '{"phase": "perf", "name": "%s", "verdict": "%s", "detail": "%s", "seconds": 1.0, ' \
    "$1" "$2" "${4:-}"
  printf '"kind": "%s", "log": ""}\n' "${3:-check}"
}

# 1. The unit phase reads a result line cut short as no result; the api phase's binary crashes
# inside a test of a group run in one process, and the tests after it never start.
matrix=api.threads.matrix.Threads/GpuCollectivesMatrix
gpu_check broken FAKE_BREAK=EngineKernel.Copy:garble,Threads/GpuCollectivesMatrix.Case/1:crash \
  -- unit api
[[ $rc -eq 1 ]] || fail "a line no one can read and a crash, yet gpu-check exited $rc, not 1"
[[ $(head -1 "$tmp/broken.txt" | cut -f1,2) == $'FAIL\t1' ]] ||
  fail "summary.json: $(head -1 "$tmp/broken.txt")"
has "$tmp/broken.txt" unit.kernels.output FAIL \
  "line 7 of logs/unit.kernels.log cannot be read as *: '\[       OK ] EngineKernel.Copy (1 ms'" ||
  fail "unit.kernels.output does not fail naming the line"
failed=$(cases "$tmp/broken.txt" FAIL | sort | paste -sd' ')
[[ $failed == "$matrix.Case/1 unit.kernels.EngineKernel.Copy unit.kernels.output" ]] ||
  fail "failed: $failed; not the garbled and crashed tests alone"
[[ $(cases "$tmp/broken.txt" INCOMPLETE) == "$matrix.Case/2" ]] ||
  fail "INCOMPLETE: $(cases "$tmp/broken.txt" INCOMPLETE), not the test after the crash"
has "$tmp/broken.txt" "$matrix.Case/2" INCOMPLETE "not run: the run ended before it*" ||
  fail "the test after the crash does not say why it did not run"
[[ $(cases "$tmp/broken.txt" "NOT RUN") == api.threads.graph_capture ]] ||
  fail "graph capture on the emulated GPU is not NOT RUN: $(cases "$tmp/broken.txt" "NOT RUN")"
passed=$(cases "$tmp/broken.txt" PASS | wc -l)
((passed == 14)) || fail "$passed tests passed, not the 14 neither broken nor after the crash"
for phase in unit api; do
  has "$tmp/broken.txt" "$phase.scope" INFO "*one GPU cannot prove no NVLink*" ||
    fail "phase $phase does not say what one GPU cannot prove"
done

# 2. Phases cut short by their time: nothing ran, nothing passed, and the run is INCOMPLETE.
gpu_check short GPU_CHECK_MAX_PHASE_SECONDS=1 -- unit api
[[ $rc -eq 3 ]] || fail "phases out of time, yet gpu-check exited $rc, not 3"
[[ $(head -1 "$tmp/short.txt" | cut -f1,2) == $'INCOMPLETE\t3' ]] ||
  fail "summary.json: $(head -1 "$tmp/short.txt")"
[[ -z $(cases "$tmp/short.txt" PASS) ]] || fail "cases passed without running"
for name in unit.kernels api.threads.calls.GpuApi.Init; do
  has "$tmp/short.txt" $name INCOMPLETE "not run: the phase's time ran out*" ||
    fail "$name does not say the phase's time ran out"
done
grep -q '^INCOMPLETE  *phase unit ' "$tmp/short/summary.txt" || fail "summary.txt: phase unit"

# 3. Nothing to compare with: PyTorch on CUDA and compute-sanitizer on the emulated GPU; the
# multigpu phase with one GPU.
gpu_check none -- torch sanitize
[[ $rc -eq 5 ]] || fail "nothing could be checked, yet gpu-check exited $rc, not 5"
head=$(head -1 "$tmp/none.txt")
[[ $head == $'NOT RUN\t5\t'*'NOT RUN=4 '*$'\tnot_run=torch.job,sanitize.'* ]] ||
  fail "summary.json: $(head -1 "$tmp/none.txt")"
grep -q '^# verdict: NOT RUN (exit status 5): 0 passed, 0 failed, 0 incomplete, 4 not run' \
  "$tmp/none/summary.txt" || fail "summary.txt: $(sed -n 2p "$tmp/none/summary.txt")"
has "$tmp/none.txt" torch.nccl INFO "NVIDIA's NCCL not run beside braid's: it refuses two ranks*" ||
  fail "torch.nccl does not say why NVIDIA's NCCL is not run"
gpu_check one BRAID_EMULATE_GPUS=1 -- multigpu
[[ $rc -eq 5 ]] || fail "the multigpu phase on one GPU exited $rc, not 5"
has "$tmp/one.txt" multigpu.gpus "NOT RUN" "1 GPU visible (BRAID_EMULATE_GPUS=1): nothing *" ||
  fail "multigpu.gpus is not NOT RUN on one GPU"
[[ $(tail -n +2 "$tmp/one.txt" | cut -f1 | paste -sd' ') == "multigpu.scope multigpu.gpus" ]] ||
  fail "the multigpu phase ran more than its scope and its count on one GPU"

# 4. The perf phase: a row cut short fails its case, naming the line; the goals, with no GPU to
# judge them on, are NOT RUN, none of them against NVIDIA's NCCL, which perf.nccl says is not
# compared; the rest passes.
gpu_check perf -- perf
[[ $rc -eq 1 ]] || fail "a table's row cut short, yet gpu-check exited $rc, not 1"
[[ $(cases "$tmp/perf.txt" FAIL) == perf.channels2 ]] ||
  fail "failed: $(cases "$tmp/perf.txt" FAIL | paste -sd' '), not perf.channels2 alone"
has "$tmp/perf.txt" perf.channels2 FAIL \
  "*no table holds: line 5: ' 2097152 524288 float sum -1 16'" ||
  fail "perf.channels2 does not fail naming the line"
for goal in reduce_loop n2_copy_bound latency_8b_n2; do
  has "$tmp/perf.txt" "perf.goal.$goal" "NOT RUN" "not judged: the emulated GPU*" ||
    fail "perf.goal.$goal is not NOT RUN on the emulated GPU"
done
nccl=$(tail -n +2 "$tmp/perf.txt" | cut -f1 | grep -i nccl | paste -sd' ')
[[ $nccl == perf.nccl ]] || fail "cases of NVIDIA's NCCL: $nccl"
has "$tmp/perf.txt" perf.nccl INFO "NVIDIA's NCCL not compared: it refuses two ranks on one GPU*" ||
  fail "perf.nccl does not say why NVIDIA's NCCL is not compared"
[[ -z $(cases "$tmp/perf.txt" SKIP) ]] || fail "a SKIP: $(cases "$tmp/perf.txt" SKIP)"

# 4b. The preflight's first call: braid-perf that ran, right, on the emulated GPU, yet launched no
# engine kernel (the fake prints no trace) fails; with both ranks' launches traced, it passes.
gpu_check nolaunch -- preflight
has "$tmp/nolaunch.txt" preflight.first_call FAIL \
  "the engine's kernel was launched by 0 of the 2 ranks (braid's trace): no kernel ran*" ||
  fail "a first call that launched no kernel passed"
gpu_check launch FAKE_LAUNCH=1 -- preflight
has "$tmp/launch.txt" preflight.first_call PASS "8 B all_reduce of 2 ranks as threads *2 launch*" ||
  fail "a first call whose two ranks launched the kernel did not pass"

# 5. perf_goals.py on a GPU's tables: a line of a table that passed, yet no one can read, fails
# the goals judged on it (as checks); the reduce loop, judged, misses its goal; no goal compares
# braid with NVIDIA's NCCL; braid against NVIDIA's NCCL (phase multigpu's figure) reads both
# tables, and fails on a line it cannot read.
logs=$tmp/goals/logs
mkdir -p "$logs"
row() { printf '%12s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n' "$@"; }
{
  echo "# braid-kernel-bench: H100, 132 SMs"
  printf '  %-26s %10s %10s %8s\n' "copy (cudaMemcpyAsync)" 1.000 2000.0 1.000 \
    "engine reduce float32 sum" 2.000 1500.0 0.750
} >"$logs/perf.kernels.log"
row 8 2 float sum -1 9.00 0.00 0.00 0 9.00 0.00 0.00 0 >"$logs/perf.n1.log"
{
  row 8 2 float sum -1 8.00 0.00 0.00 0 8.00 0.00 0.00 0
  row 1048576 262144 float sum -1 nan 1.0 1.0 0 1.0 1.0 1.0 0
} >"$logs/perf.n2.log"
{
  for c in kernels n1 n2; do case_json "perf.$c" PASS; done
} >"$tmp/goals/cases.jsonl"
python3 "$lib/perf_goals.py" goals "$logs" "$tmp/goals/cases.jsonl" --emulated 0 >"$tmp/out"
# goal_cases FILE: "-", then "name<TAB>verdict<TAB>kind: detail" for each case of FILE.
goal_cases() {
  python3 -c '
import json, sys
print("-")
for line in open(sys.argv[1]):
    c = json.loads(line)
    print(c["name"], c["verdict"], c["kind"] + ": " + c["detail"], sep="\t")' "$1"
}
goal_cases "$tmp/goals/cases.jsonl" >"$tmp/goals.txt"
! grep -qi nccl "$tmp/goals.txt" || fail "a goal against NVIDIA's NCCL on one GPU"
row 8 2 float sum -1 18.00 0.00 0.00 0 18.00 0.00 0.00 0 >"$logs/nccl.log"
versus=$(python3 "$lib/perf_goals.py" versus "$logs/perf.n1.log" "$logs/nccl.log") ||
  fail "versus: $versus"
want="braid vs NVIDIA's NCCL, time out of place (braid/NCCL): 8 B 9.0 vs 18.0 us (0.50)"
[[ $versus == "$want" ]] || fail "versus: $versus"
! versus=$(python3 "$lib/perf_goals.py" versus "$logs/perf.n2.log" "$logs/nccl.log") ||
  fail "versus read a table with a line no one can read: $versus"
[[ $versus == "line 2 of logs/perf.n2.log cannot be read: "* ]] || fail "versus: $versus"
for goal in n2_copy_bound latency_8b_n2; do
  has "$tmp/goals.txt" "perf.goal.$goal" FAIL \
    "check: not judged: line 2 of logs/perf.n2.log cannot be read: ' *1048576 *nan *'" ||
    fail "$goal does not fail naming the line"
done
has "$tmp/goals.txt" perf.goal.reduce_loop FAIL \
  "goal: float32 sum 1500 GB/s vs copy 2000 GB/s = 0.750 (goal 0.85)" || fail "reduce_loop"

# 6. summary.py: a line of cases.jsonl that is no case fails the run, naming it; a goal missed
# beside a phase out of time is INCOMPLETE (3), not "only goals missed" (2); what passed beside
# what was NOT RUN passes (0), with the NOT RUN counted and named.
# summary NAME SECONDS TIMED_OUT: summary.py on $tmp/NAME/cases.jsonl and the perf phase's time;
# sets rc.
summary() {
  local name=$1
  printf '{"phase": "perf", "seconds": %s, "limit": 300, "timed_out": %s}\n' "$2" "$3" \
    >"$tmp/$name/phases.jsonl"
  rc=0
  python3 "$lib/summary.py" "$tmp/$name" "$tmp/$name" --mode gpu --binaries fake \
    --phases perf >"$tmp/out" || rc=$?
  summary_cases "$tmp/$name/summary.json" >"$tmp/$name.txt"
}
mkdir -p "$tmp/garbled" "$tmp/slow" "$tmp/partial"
{
  case_json perf.n1 PASS
  echo '{"phase": "perf", "name": "perf.n2", "verdict": "PA'
} >"$tmp/garbled/cases.jsonl"
summary garbled 1.0 false
[[ $rc -eq 1 ]] || fail "summary.py exited $rc on a line it cannot read, not 1"
has "$tmp/garbled.txt" summary.cases.line2 FAIL \
  "line 2 of cases.jsonl cannot be read (not a JSON object): '{\"phase\": \"perf\", *\"PA'" ||
  fail "no FAIL naming the line"

{ case_json perf.n1 PASS; case_json perf.goal.x FAIL goal; } >"$tmp/slow/cases.jsonl"
summary slow 330.0 true
[[ $rc -eq 3 && $(head -1 "$tmp/slow.txt" | cut -f1) == INCOMPLETE ]] ||
  fail "a goal missed in a phase out of time: exit $rc, $(head -1 "$tmp/slow.txt")"

{ case_json perf.n1 PASS; case_json perf.kernels "NOT RUN"; } >"$tmp/partial/cases.jsonl"
summary partial 10.0 false
[[ $rc -eq 0 ]] || fail "what ran passed, yet summary.py exited $rc"
[[ $(head -1 "$tmp/partial.txt") == $'PASS\t0\t'*'NOT RUN=1 '*$'\tnot_run=perf.kernels' ]] ||
  fail "summary.json: $(head -1 "$tmp/partial.txt")"
grep -q '^# PASS speaks of what ran' "$tmp/partial/summary.txt" || fail "summary.txt says not"

echo "PASS: an unreadable line fails its case, naming it (GoogleTest, braid-perf, cases.jsonl);" \
  "a crash and a phase out of time leave INCOMPLETE cases (exit 3); nothing to compare is NOT RUN" \
  "(exit 5 where nothing else ran)"
