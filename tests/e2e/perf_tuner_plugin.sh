#!/usr/bin/env bash
# A tuner plugin decides what braid-perf's all_reduce runs (docs/tuning.md, "Tuner plugins"):
# the test tuner (tests/plugins/tuner_plugin.cc) forces the ring, then the tree, for a 1 MiB
# all_reduce of 2 ranks, and BRAID_DUMP_SCHEDULE shows each rank running what it forced. Run with
# BRAID_EMULATE_GPUS set, the ranks are GPU communicators on the emulated GPU.
#
# usage: perf_tuner_plugin.sh BRAID_PERF TUNER_LIBRARY
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 2 ]] || fail "usage: $0 BRAID_PERF TUNER_LIBRARY"
out=$E2E_TMP/out err=$E2E_TMP/err

for algo in ring tree; do
  NCCL_TUNER_PLUGIN=$2 BRAID_TEST_TUNER_ALGO=$algo BRAID_DUMP_SCHEDULE=1 NCCL_DEBUG=INFO \
    run_perf "$out" "$err" "$1" all_reduce --procs 2 -b 1M -e 1M -n 1 -w 0
  expect_success "$out" "$err"
  cat "$out" "$err" >"$E2E_TMP/all"
  grep -q "TUNER/Plugin: Using braidtuner (v6)" "$E2E_TMP/all" ||
    fail "the tuner was not loaded" "$E2E_TMP/all"
  for rank in 0 1; do
    grep -q "\[rank $rank\] $algo simple schedule: rank $rank of 2, AllReduce" "$E2E_TMP/all" ||
      fail "rank $rank did not run the $algo the tuner forced" "$E2E_TMP/all"
  done
done
echo "PASS [$E2E_NAME]"
