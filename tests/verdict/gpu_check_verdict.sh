#!/usr/bin/env bash
# scripts/gpu-check's verdicts are honest (issue 27): its perf phase on the emulated GPU, with the
# binaries of this build, passes, exits 0 and says so in summary.json; the same phase with one case
# broken on purpose (GPU_CHECK_BREAK=perf.types_ops preloads tests/verdict's lying library into
# that case alone, whose avg returns each rank's own input) exits non-zero, and summary.json says
# FAIL for that case and for no other.
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

# run NAME [VAR=VALUE...]: the perf phase into $tmp/NAME/; sets rc.
run() {
  local name=$1
  shift
  rc=0
  env "$@" BRAID_EMULATE_GPUS=2 OUT="$tmp/$name" GPU_CHECK_WORK="$tmp/work-$name" \
    timeout 300 "$check" --emulated --prebuilt "$build" perf >"$tmp/out" 2>&1 || rc=$?
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

run pass
[[ $rc -eq 0 ]] || fail "the perf phase exited $rc on the emulated GPU"
verdicts "$tmp/pass/summary.json" >"$tmp/pass.txt"
[[ $(head -1 "$tmp/pass.txt") == "PASS 0 perf" ]] || fail "summary.json: $(head -1 "$tmp/pass.txt")"
grep -q '^perf.types_ops PASS ' "$tmp/pass.txt" || fail "perf.types_ops did not pass"
passed=$(grep -c ' PASS ' "$tmp/pass.txt")

run broken GPU_CHECK_BREAK=perf.types_ops
[[ $rc -ne 0 ]] || fail "a case broken on purpose, yet gpu-check exited 0"
verdicts "$tmp/broken/summary.json" >"$tmp/broken.txt"
[[ $(head -1 "$tmp/broken.txt") == "FAIL $rc perf" ]] ||
  fail "summary.json: $(head -1 "$tmp/broken.txt"), exit status $rc"
broken=$(grep '^perf.types_ops ' "$tmp/broken.txt")
[[ $broken =~ ^perf.types_ops\ FAIL\ .*wrong\ elements.*broken\ on\ purpose ]] ||
  fail "perf.types_ops is no FAIL naming its wrong elements: $broken"
others=$(grep -v '^perf.types_ops ' "$tmp/broken.txt" | grep -c ' FAIL ' || true)
[[ $others -eq 0 ]] || fail "$others other cases failed too"
echo "PASS: $passed cases passed, exit 0; broken on purpose, perf.types_ops alone failed, exit $rc"
