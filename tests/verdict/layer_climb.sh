#!/usr/bin/env bash
# scripts/check-layers, the check that layers include downward only (issue 26), in front of a
# tree that breaks the rule: a transport header that reaches up into src/algo, and a base header
# that reaches into transport. It must fail naming both includes; the same tree without them must
# pass, so that the check is seen to tell the two apart.
#
# usage: layer_climb.sh SCRIPTS/CHECK-LAYERS
set -euo pipefail
check=$1
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/{base,src/algo,transport/shm}
printf '#pragma once\n' >"$tree/base/log.h"
printf '#pragma once\n#include "base/log.h"\n' >"$tree/src/algo/schedule.h"
printf '#pragma once\n#include "base/log.h"\n' >"$tree/transport/shm/fifo.h"
python3 "$check" --root "$tree" || { echo "FAIL: a tree that includes downward failed" >&2; exit 1; }

printf '#include "algo/schedule.h"\n' >>"$tree/transport/shm/fifo.h"
printf '#include "transport/shm/fifo.h"\n' >>"$tree/base/log.h"
rc=0
python3 "$check" --root "$tree" >"$tree/out" 2>&1 || rc=$?
cat "$tree/out"
if [[ $rc -eq 0 ]]; then
  echo "FAIL: includes that climb a layer passed" >&2
  exit 1
fi
grep -q 'transport/shm/fifo.h:3: transport includes src/algo/schedule.h' "$tree/out" &&
  grep -q 'base/log.h:2: base includes transport/shm/fifo.h' "$tree/out" ||
  { echo "FAIL: the report does not name both climbs" >&2; exit 1; }
echo "PASS: both climbs named, exit status $rc"
