#!/usr/bin/env bash
# scripts/gpu-check fits one loan of a device machine (issue 50): its two calls, as the script
# defines them (--calls, read from the same tables its runs use), take at most 540 s each and 780
# together, every phase in one of them; docs/gpu-check.md gives the device tool those calls with
# those timeouts and the phases those limits; and the script refuses, without --emulated, phases
# that one call cannot hold, before it looks for a GPU.
#
# usage: gpu_check_calls.sh SCRIPTS/GPU-CHECK DOCS/GPU-CHECK.MD
set -euo pipefail
check=$1 docs=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $1" >&2
  exit 1
}

# 1. The calls, as the script will run them, held to the caps by arithmetic of their own.
env -u GPU_CHECK_MAX_PHASE_SECONDS "$check" --calls >"$tmp/calls" || fail "--calls exited $?"
python3 - "$tmp/calls" "$docs" >"$tmp/said" 2>&1 <<'EOF_PY' || fail "$(cat "$tmp/said")"
import re, sys

calls, docs = sys.argv[1], sys.argv[2]
lines = open(calls).read().splitlines()
phases = lines[0].removeprefix("phases: ").split()
loan = dict(kv.split("=") for kv in lines[-1].split()[1:])
cap_call, cap_loan = int(loan["cap_call"]), int(loan["cap_loan"])
grace, overhead = int(loan["grace"]), int(loan["overhead"])
if (cap_call, cap_loan) != (540, 780):
    sys.exit(f"the caps are {cap_call} and {cap_loan}, not one loan's 540 and 780")
timeouts, limits, where = {}, {}, {}
for line in lines[1:-1]:
    m = re.fullmatch(r"(call\d) timeout_s=(\d+) phases:((?: \w+=\d+)+)", line)
    if not m:
        sys.exit(f"--calls printed '{line}'")
    call = m.group(1)
    mine = dict((p, int(s)) for p, s in (kv.split("=") for kv in m.group(3).split()))
    for p, s in mine.items():
        if p in where:
            sys.exit(f"phase {p} is in {where[p]} and {call}")
        where[p], limits[p] = call, s
    timeouts[call] = int(m.group(2))
    need = overhead + sum(s + grace for s in mine.values())
    if timeouts[call] != need:
        sys.exit(f"{call}: timeout_s {timeouts[call]}, yet its phases need {need}")
    if timeouts[call] > cap_call:
        sys.exit(f"{call}: {timeouts[call]} s, more than a call's {cap_call}")
if sorted(where) != sorted(phases):
    sys.exit(f"the calls hold {sorted(where)}, not every phase {sorted(phases)}")
if sum(timeouts.values()) > cap_loan:
    sys.exit(f"the calls take {sum(timeouts.values())} s together, more than {cap_loan}")

# 2. The docs: each call to the device tool with the script's timeout_s, each phase's limit.
text = open(docs).read()
said = dict(re.findall(r"^\| `scripts/gpu-check --prebuilt \.gpu-bundle (call\d)` \| (\d+) \|",
                       text, re.M))
if {c: int(s) for c, s in said.items()} != timeouts:
    sys.exit(f"docs/gpu-check.md gives the calls {said}, the script {timeouts}")
documented = {p: int(s) for p, s in re.findall(r"^\| `(\w+)` \| (\d+) s \|", text, re.M)}
if documented != limits:
    sys.exit(f"docs/gpu-check.md gives the limits {documented}, the script {limits}")
print(", ".join(f"{c} {t} s" for c, t in timeouts.items()) +
      f": {sum(timeouts.values())} of {cap_loan} s")
EOF_PY

# 3. More than a call holds is refused without --emulated, before the script looks for a GPU (the
# run would end at the device tool's limit with the summary unwritten); lowered limits that fit
# are not.
refused() {
  local rc=0
  env "$@" OUT="$tmp/out" "$check" --prebuilt "$tmp" preflight unit api perf torch sanitize \
    multigpu >"$tmp/log" 2>&1 || rc=$?
  [[ $rc -eq 4 ]] && grep -q "more than one device call's 540 s" "$tmp/log"
}
refused GPU_CHECK_ANYWAY=1 || fail "every phase in one call was not refused: $(head -3 "$tmp/log")"
! refused GPU_CHECK_ANYWAY=1 GPU_CHECK_MAX_PHASE_SECONDS=50 ||
  fail "phases lowered to 50 s (500 s in all) were refused"
! refused GPU_CHECK_ANYWAY=1 GPU_CHECK_OVER_CAP=1 || fail "GPU_CHECK_OVER_CAP=1 was refused too"
for call in call1 call2; do
  rc=0
  env GPU_CHECK_ANYWAY=1 OUT="$tmp/out" "$check" --prebuilt "$tmp" "$call" >"$tmp/log" 2>&1 ||
    rc=$?
  ! grep -q "more than one device call" "$tmp/log" || fail "$call was refused"
done
echo "PASS: $(cat "$tmp/said"); more than a call holds is refused"
