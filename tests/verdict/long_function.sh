#!/usr/bin/env bash
# scripts/check-function-length, the check that the communicator's functions stay short (issue
# 49), in front of a tree with one function at the limit and, then, one past it: the first must
# pass, the second fail naming the file, the line where the function begins and its length.
#
# usage: long_function.sh SCRIPTS/CHECK-FUNCTION-LENGTH
set -euo pipefail
check=$1
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/src/comm"
# A definition whose signature spans two lines, of `lines` lines in all with its braces.
function_of() {
  local name=$1 lines=$2
  printf 'Status Part::%s(int a,\n' "$name"
  printf '                  int b) {\n'
  for ((i = 0; i < lines - 4; ++i)); do printf '  if (a > %d) { b += a; }\n' "$i"; done
  printf '  return Status::success();\n}\n\n'
}
{
  printf '// a part\n#include "comm/part.h"\n\n'
  function_of atTheLimit 60
} >"$tree/src/comm/part.cc"
python3 "$check" --root "$tree" || { echo "FAIL: a function of 60 lines failed" >&2; exit 1; }

function_of pastTheLimit 61 >>"$tree/src/comm/part.cc"
rc=0
python3 "$check" --root "$tree" >"$tree/out" 2>&1 || rc=$?
cat "$tree/out"
if [[ $rc -eq 0 ]]; then
  echo "FAIL: a function of 61 lines passed" >&2
  exit 1
fi
line=$(grep -n 'pastTheLimit' "$tree/src/comm/part.cc" | cut -d: -f1)
grep -q "src/comm/part.cc:$line: a function of 61 lines" "$tree/out" ||
  { echo "FAIL: the report does not name the function at line $line with its 61 lines" >&2; exit 1; }
grep -q 'atTheLimit\|part.cc:4:' "$tree/out" &&
  { echo "FAIL: the function at the limit was reported too" >&2; exit 1; }
echo "PASS: the function past the limit named, exit status $rc"
