#!/usr/bin/env bash
# scripts/check-test-counts, the check that no label's suite shrank unseen (issue 48), in front of
# a suite with one registered test taken away. The counts of this build, written to a file of
# their own, must pass; the same build with one test left out of ctest's listing (-E) must fail
# naming that test's label and both numbers.
#
# usage: shrunk_suite.sh SCRIPTS/CHECK-TEST-COUNTS BUILD_DIR
set -euo pipefail
check=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/expected.txt"
python3 "$check" --write --expected "$tmp/expected.txt" "$build" release >/dev/null
python3 "$check" --expected "$tmp/expected.txt" "$build" release ||
  { echo "FAIL: this build's own counts did not pass" >&2; exit 1; }

# One labelled test of this build, and its first label.
read -r name label < <(ctest --test-dir "$build" --show-only=json-v1 | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tests"]:
    for p in t.get("properties", []):
        if p["name"] == "LABELS" and p["value"]:
            print(t["name"], p["value"][0]); sys.exit(0)
sys.exit("no labelled test")')
want=$(awk -v l="$label" '$2 == l { print $3 }' "$tmp/expected.txt")
escaped=$(sed 's/[][\.*^$()+?{}|]/\\&/g' <<<"$name")
rc=0
python3 "$check" --expected "$tmp/expected.txt" "$build" release -E "^$escaped\$" >"$tmp/out" 2>&1 ||
  rc=$?
cat "$tmp/out"
((rc != 0)) || { echo "FAIL: a suite without $name passed" >&2; exit 1; }
grep -q "release label $label: $((want - 1)) tests registered, $want expected" "$tmp/out" ||
  { echo "FAIL: the report does not name label $label and its numbers" >&2; exit 1; }
echo "PASS: without $name, label $label was found short ($((want - 1)) of $want), exit status $rc"
