#!/usr/bin/env bash
# Socket channels on their rails: 2 hosts (network namespaces) of 2 ranks, each host with two
# interfaces on two bridges (bveth0 on 10.77.0.0/24, bveth1 on 10.78.0.0/24: a switch per
# rail), BRAID_SOCKET_IFNAME=bveth selecting both. The interfaces join each host's topology as
# NICs, the search plans a channel per rail, and the socket transport connects each channel's
# FIFOs from and to the planned interfaces. Checked: every planned hop between hosts stays on
# one rail; each hop's sender says it connected from the planned interface to the peer's
# ("channel C: to rank R via bveth1 (planned) to its bveth1"); and both interfaces of both
# hosts sent bytes during the run (the kernel's own counters, /sys/class/net/*/statistics).
#
# usage: perf_socket_rails.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
perf=$1
export BRAID_NETNS_RAILS=2
netns_hosts 2
export BRAID_SOCKET_IFNAME=bveth BRAID_NET=Socket BRAID_DEBUG=INFO

# tx_bytes HOST IFACE: bytes the interface sent, by the kernel's count.
tx_bytes() {
  ip netns exec "${BRAID_NETNS_HOSTS[$1]}" cat "/sys/class/net/$2/statistics/tx_bytes"
}
declare -A before
for host in 0 1; do
  for iface in bveth0 bveth1; do before[$host.$iface]=$(tx_bytes "$host" "$iface"); done
done

log_of() { if (($1 == 0)); then echo "$E2E_TMP/err"; else echo "$E2E_TMP/err.$1"; fi; }
run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" 2 4 "$perf" all_reduce -b 16M -e 16M -n 2 -w 1 -c 1
((RUN_RC == 0)) || fail "a rank failed" "$E2E_TMP/out" "$E2E_TMP/err"
grep -Eq '^ +16777216 .* 0$' "$E2E_TMP/out" || fail "no checked 16 MiB row without errors" \
  "$E2E_TMP/out"

plan=$(grep -o 'topology: channel [0-9]* between hosts:.*' "$E2E_TMP/err" || true)
[[ $(wc -l <<<"$plan") -ge 2 ]] || fail "rank 0 plans fewer than 2 channels between hosts" \
  "$E2E_TMP/err"
rails=""
while read -r line; do
  channel=$(sed -E 's/topology: channel ([0-9]+) .*/\1/' <<<"$line")
  hops=$(grep -oE '[0-9]+->[0-9]+ \([^ ]+ to [^ ]+\)' <<<"$line")
  names=$(grep -oE 'bveth[0-9]' <<<"$hops" | sort -u)
  [[ $(wc -l <<<"$names") -eq 1 ]] || fail "channel $channel crosses rails: $line"
  rails+="$names "
  while read -r hop; do
    read -r from to nic <<<"$(sed -E 's/([0-9]+)->([0-9]+) \(([^ ]+) to .*/\1 \2 \3/' <<<"$hop")"
    grep -q "channel $channel: to rank $to via $nic (planned) to its $nic" "$(log_of "$from")" ||
      fail "rank $from did not connect channel $channel to rank $to by $nic" "$(log_of "$from")"
  done <<<"$hops"
done <<<"$plan"
[[ $(tr ' ' '\n' <<<"$rails" | grep . | sort -u | wc -l) -eq 2 ]] ||
  fail "the channels use rails ($rails), not both interfaces" "$E2E_TMP/err"
# 16 MiB all_reduce x 3 calls: each rank sends about 3 x 16 MiB across hosts in all; each
# interface of each host must have carried at least a megabyte of it.
for host in 0 1; do
  for iface in bveth0 bveth1; do
    sent=$(($(tx_bytes "$host" "$iface") - before[$host.$iface]))
    ((sent > 1048576)) || fail "host $host's $iface sent only $sent bytes" "$E2E_TMP/err"
  done
done
echo "PASS [$E2E_NAME]: channels on rails (${rails% }), each connected by its planned" \
  "interfaces; both interfaces of both hosts sent"
