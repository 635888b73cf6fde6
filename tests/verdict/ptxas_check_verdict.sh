#!/usr/bin/env bash
# scripts/lib/ptxas_check.py, the check of the code ptxas generates for the engine (issue 50), in
# front of a fixture (ptxas_spill.cu): the engine's reduce loop under the kernel's launch bounds
# must pass as it is, and fail naming the loop once its element function holds twice the
# registers a thread has (BRAID_PTXAS_SPILL).
#
# usage: ptxas_check_verdict.sh SCRIPTS/LIB/PTXAS_CHECK.PY NVCC
set -euo pipefail
check=$1
nvcc=$2
fixture="$(cd "$(dirname "$0")" && pwd)/ptxas_spill.cu"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

python3 "$check" --nvcc "$nvcc" --source "$fixture" >"$out" 2>&1 ||
  { cat "$out"; echo "FAIL: the loop without the spill failed the check" >&2; exit 1; }
cat "$out"

rc=0
python3 "$check" --nvcc "$nvcc" --source "$fixture" --define BRAID_PTXAS_SPILL >"$out" 2>&1 || rc=$?
cat "$out"
if [[ $rc -eq 0 ]]; then
  echo "FAIL: the loop that holds twice its registers passed the check" >&2
  exit 1
fi
grep -q '^FAIL: void braid::kernels::engine::transformLoop<.*Greedy.*: spills' "$out" ||
  { echo "FAIL: the report does not name the spilling loop (transformLoop over Greedy)" >&2; exit 1; }
echo "PASS: the spilling loop named, exit status $rc"
