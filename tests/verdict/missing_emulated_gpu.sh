#!/usr/bin/env bash
# An emulated GPU that does not come up fails the emulated-GPU tests instead of skipping them
# (issue 31): BRAID_EMULATE_GPUS=4x asks the test for four emulated devices while the library
# rejects the value, and CUDA_VISIBLE_DEVICES hides any real one, so the runtime shows none. The
# binary must exit non-zero saying so; a skip (exit 0, "SKIPPED") is this test's failure.
#
# usage: missing_emulated_gpu.sh BRAID_EMULATED_GPU_TESTS
set -euo pipefail
tests=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
BRAID_EMULATE_GPUS=4x CUDA_VISIBLE_DEVICES= timeout 60 "$tests" \
  --gtest_filter='GpuApi.CallReturnsBeforeItsDataMoves:GpuProcesses.TwoProcessesOnTwoGpus' \
  >"$tmp/out" 2>&1 || rc=$?
if [[ $rc -eq 0 ]] || ! grep -q "the emulated GPU did not come up" "$tmp/out"; then
  echo "FAIL: exit status $rc; a missing emulated GPU must fail the tests, saying so:" >&2
  cat "$tmp/out" >&2
  exit 1
fi
grep -q "SKIPPED" "$tmp/out" && { echo "FAIL: a test skipped" >&2; cat "$tmp/out" >&2; exit 1; }
echo "PASS: exit status $rc, both tests failed on the missing device"
