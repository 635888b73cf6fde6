#!/usr/bin/env bash
# scripts/gpu-check's verdicts are honest (issue 27): its perf phase on the emulated GPU, with the
# binaries of this build, passes, exits 0 and says so in summary.json; the same phase with one case
# broken on purpose (GPU_CHECK_BREAK=perf.types_ops preloads tests/verdict's lying library into
# that case alone, whose avg returns each rank's own input) exits non-zero, and summary.json says
# FAIL for that case and for no other. The multigpu phase (issue 50): with one emulated GPU it is
# NOT RUN and exits 5; with two, its ranks as threads land on a device each and its ranks as
# processes, each seeing its own device, on two PCI bus IDs, every table right, and NVIDIA's NCCL
# NOT RUN (the tests of braid_gpu_api_tests it runs are checked where this build has them).
#
# usage: gpu_check_verdict.sh SCRIPTS/GPU-CHECK BUILD_DIR
set -euo pipefail
check=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $1" >&2
  [[ ! -f $tmp/out ]] || tail -40 "$tmp/out" >&2
  exit 1
}

# run NAME PHASE [VAR=VALUE...]: PHASE into $tmp/NAME/; sets rc.
run() {
  local name=$1 phase=$2
  shift 2
  rc=0
  env BRAID_EMULATE_GPUS=2 "$@" OUT="$tmp/$name" GPU_CHECK_WORK="$tmp/work-$name" \
    timeout 300 "$check" --emulated --prebuilt "$build" "$phase" >"$tmp/out" 2>&1 || rc=$?
  [[ -f $tmp/$name/summary.json ]] || fail "$name: no summary.json (exit status $rc)"
  [[ -f $tmp/$name/summary.txt && -f $tmp/$name/logs.tar.gz ]] ||
    fail "$name: no summary.txt or logs.tar.gz"
}

# verdicts FILE: "verdict exit_status" and then "name verdict" for every case of summary.json.
verdicts() {
  python3 - "$1" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
print(s["verdict"], s["exit_status"], " ".join(s["phases_asked"]))
for phase in s["phases"]:
    for case in phase["cases"]:
        print(case["name"], case["verdict"], case["detail"])
EOF
}

run pass perf
[[ $rc -eq 0 ]] || fail "the perf phase exited $rc on the emulated GPU"
verdicts "$tmp/pass/summary.json" >"$tmp/pass.txt"
[[ $(head -1 "$tmp/pass.txt") == "PASS 0 perf" ]] || fail "summary.json: $(head -1 "$tmp/pass.txt")"
grep -q '^perf.types_ops PASS ' "$tmp/pass.txt" || fail "perf.types_ops did not pass"
passed=$(grep -c ' PASS ' "$tmp/pass.txt")

run broken perf GPU_CHECK_BREAK=perf.types_ops
[[ $rc -ne 0 ]] || fail "a case broken on purpose, yet gpu-check exited 0"
verdicts "$tmp/broken/summary.json" >"$tmp/broken.txt"
[[ $(head -1 "$tmp/broken.txt") == "FAIL $rc perf" ]] ||
  fail "summary.json: $(head -1 "$tmp/broken.txt"), exit status $rc"
broken=$(grep '^perf.types_ops ' "$tmp/broken.txt")
[[ $broken =~ ^perf.types_ops\ FAIL\ .*wrong\ elements.*broken\ on\ purpose ]] ||
  fail "perf.types_ops is no FAIL naming its wrong elements: $broken"
others=$(grep -v '^perf.types_ops ' "$tmp/broken.txt" | grep -c ' FAIL ' || true)
[[ $others -eq 0 ]] || fail "$others other cases failed too"
broken_rc=$rc

run one multigpu BRAID_EMULATE_GPUS=1
verdicts "$tmp/one/summary.json" >"$tmp/one.txt"
[[ $rc -eq 5 && $(head -1 "$tmp/one.txt") == "NOT RUN 5 multigpu" ]] ||
  fail "multigpu on one GPU: exit $rc, $(head -1 "$tmp/one.txt")"
grep -q '^multigpu.gpus NOT RUN 1 GPU visible' "$tmp/one.txt" || fail "$(cat "$tmp/one.txt")"

run two multigpu
verdicts "$tmp/two/summary.json" >"$tmp/two.txt"
for name in multigpu.threads multigpu.threads.devices multigpu.threads_collectives \
  multigpu.processes; do
  grep -q "^$name PASS " "$tmp/two.txt" || fail "$(grep "^$name " "$tmp/two.txt" || echo "$name?")"
done
grep -q '^multigpu.processes PASS 2 processes, each seeing its own GPU (2 PCI bus IDs)' \
  "$tmp/two.txt" || fail "$(grep '^multigpu.processes ' "$tmp/two.txt")"
grep -q '^multigpu.nccl NOT RUN ' "$tmp/two.txt" || fail "multigpu.nccl is not NOT RUN"
if [[ -x $build/bin/braid_gpu_api_tests ]]; then
  [[ $rc -eq 0 ]] || fail "multigpu on two emulated GPUs exited $rc"
  tests="its tests passed or skipped"
else
  tests="this build has no braid_gpu_api_tests to run"
fi
echo "PASS: $passed cases passed, exit 0; broken on purpose, perf.types_ops alone failed, exit" \
  "$broken_rc; multigpu NOT RUN on one GPU, on two each rank on a device of its own ($tests)"
