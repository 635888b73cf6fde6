#!/usr/bin/env bash
# Hosts exchange their topologies: 2 hosts x 2 ranks (BRAID_HOSTID) run with
# BRAID_TOPO_DUMP_FILE, where rank 0 writes the cluster the ranks planned on; braid-topo, reading
# it, prints both hosts and the ring's way out of each host and into the next through their NICs.
#
# usage: perf_hosts_topo.sh BRAID_PERF BRAID_TOPO
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 2 ]] || fail "usage: $0 BRAID_PERF BRAID_TOPO"
perf=$1 topo=$2
export BRAID_TOPO_DUMP_FILE=$E2E_TMP/cluster.xml
run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" 2 4 "$perf" all_reduce -b 1024 -e 1024 -n 1 -w 0 -c 1
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
unset BRAID_TOPO_DUMP_FILE
[[ -s $E2E_TMP/cluster.xml ]] || fail "rank 0 wrote no cluster topology" "$E2E_TMP/err"
"$topo" --load "$E2E_TMP/cluster.xml" --nranks 4 >"$E2E_TMP/topo" 2>&1 || true
grep -q '^host0$' "$E2E_TMP/topo" && grep -q '^host1$' "$E2E_TMP/topo" ||
  fail "braid-topo does not list both hosts" "$E2E_TMP/topo"
if ! grep -q '^network ' "$E2E_TMP/topo"; then
  echo "PASS [$E2E_NAME]: both hosts listed; this machine has no physical NIC, so no ring path"
  exit 0
fi
grep -qE 'host0 -> host1: rank [0-9]+ -> rank [0-9]+ \(.+ -> .+\)' "$E2E_TMP/topo" &&
  grep -qE 'host1 -> host0: rank [0-9]+ -> rank [0-9]+ \(.+ -> .+\)' "$E2E_TMP/topo" ||
  fail "braid-topo does not show the ring leaving each host through a NIC" "$E2E_TMP/topo"
echo "PASS [$E2E_NAME]: $(grep -c ' -> ' "$E2E_TMP/topo") ring crossings between hosts"
