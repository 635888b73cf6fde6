#!/usr/bin/env bash
# Channels on their rails: 2 hosts x 4 ranks, each host with the two NICs of the emulated HCA
# (BRAID_IB_EMULATE=2), run all_reduce over verbs. The topology search plans the rings (rank 0
# says each channel's hops between hosts and their NICs, "topology: channel C between hosts:"),
# and this checks, from every rank's log:
#   - each channel leaves and enters every host by NICs of one rail (the same name on both hosts),
#     and the channels use both rails;
#   - what runs is what was planned: each planned hop's sender opened its FIFO end on the planned
#     NIC ("channel C: to rank R via emu_K:1 (planned)") and its receiver too ("from rank ...");
#   - every NIC of both hosts carried traffic: each planned hop's sender's emulated HCA counted
#     bytes sent on that NIC ("emulated HCA emu_K:1: N bytes transmitted"), as a real port's
#     port_xmit_data counter would.
#
# usage: perf_rails.sh BRAID_PERF
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 1 ]] || fail "usage: $0 BRAID_PERF"
perf=$1
export BRAID_IB_EMULATE=2 BRAID_NET=IB BRAID_DEBUG=INFO
run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" 2 8 "$perf" all_reduce -b 4M -e 4M -n 2 -w 1 -c 1
((RUN_RC == 0)) || fail "a rank failed" "$E2E_TMP/out" "$E2E_TMP/err"
grep -Eq '^ +4194304 .* 0$' "$E2E_TMP/out" || fail "no checked 4 MiB row without errors" \
  "$E2E_TMP/out"

log_of() { if (($1 == 0)); then echo "$E2E_TMP/err"; else echo "$E2E_TMP/err.$1"; fi; }

plan=$(grep -o 'topology: channel [0-9]* between hosts:.*' "$E2E_TMP/err" || true)
[[ -n $plan ]] || fail "rank 0 says no channel between hosts (no NICs planned?)" "$E2E_TMP/err"
channels=0 rails=""
while read -r line; do
  channel=$(sed -E 's/topology: channel ([0-9]+) .*/\1/' <<<"$line")
  # Hops as "A->B (NIC to NIC)".
  hops=$(grep -oE '[0-9]+->[0-9]+ \([^ ]+ to [^ ]+\)' <<<"$line")
  [[ $(wc -l <<<"$hops") -eq 2 ]] || fail "channel $channel does not cross between hosts twice: $line"
  nics=$(grep -oE 'emu_[0-9]+:1' <<<"$hops" | sort -u)
  [[ $(wc -l <<<"$nics") -eq 1 ]] || fail "channel $channel crosses rails: $line"
  rails+="$nics "
  while read -r hop; do
    read -r from to nic <<<"$(sed -E 's/([0-9]+)->([0-9]+) \(([^ ]+) to .*/\1 \2 \3/' <<<"$hop")"
    grep -q "channel $channel: to rank $to via $nic (planned)" "$(log_of "$from")" ||
      fail "rank $from did not open channel $channel's FIFO to rank $to on $nic" "$(log_of "$from")"
    grep -q "channel $channel: from rank $from via $nic (planned)" "$(log_of "$to")" ||
      fail "rank $to did not open channel $channel's FIFO from rank $from on $nic" "$(log_of "$to")"
    sent=$(grep -oE "emulated HCA $nic: [0-9]+ bytes transmitted" "$(log_of "$from")" |
      grep -oE '[0-9]+ bytes' | grep -oE '[0-9]+' | tail -1)
    [[ -n $sent && $sent -gt 0 ]] ||
      fail "rank $from's $nic carried no bytes for channel $channel" "$(log_of "$from")"
  done <<<"$hops"
  channels=$((channels + 1))
done <<<"$plan"
distinct=$(tr ' ' '\n' <<<"$rails" | grep . | sort -u | wc -l)
((channels >= 2 && distinct == 2)) ||
  fail "$channels channel(s) on $distinct rail(s) ($rails): expected both NICs used" "$E2E_TMP/err"

# Tree all_reduce across hosts runs the planned trees (a chain in each host, a tree between the
# hosts' heads): channel T runs tree T, and each edge between hosts is opened, both ways, on the
# NICs planned for it.
export BRAID_ALGO=tree
run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" 2 8 "$perf" all_reduce -b 4M -e 4M -n 2 -w 1 -c 1
((RUN_RC == 0)) || fail "a rank failed on the tree" "$E2E_TMP/out" "$E2E_TMP/err"
grep -Eq '^ +4194304 .* 0$' "$E2E_TMP/out" || fail "no checked tree row without errors" \
  "$E2E_TMP/out"
trees=$(grep -o 'topology: tree [0-9]* between hosts:.*' "$E2E_TMP/err" || true)
[[ $(wc -l <<<"$trees") -eq 2 ]] || fail "rank 0 does not name two trees between hosts" "$E2E_TMP/err"
while read -r line; do
  tree=$(sed -E 's/topology: tree ([0-9]+) .*/\1/' <<<"$line")
  read -r from to nic <<<"$(grep -oE '[0-9]+->[0-9]+ \([^ ]+ to' <<<"$line" |
    sed -E 's/([0-9]+)->([0-9]+) \(([^ ]+) to/\1 \2 \3/')"
  grep -q "channel $tree: to rank $to via $nic (planned)" "$(log_of "$from")" ||
    fail "tree $tree: rank $from did not send up to rank $to on $nic" "$(log_of "$from")"
  grep -q "channel $tree: from rank $from via " "$(log_of "$to")" ||
    fail "tree $tree: rank $to did not receive from rank $from" "$(log_of "$to")"
done <<<"$trees"
echo "PASS [$E2E_NAME]: $channels channels on rails (${rails% }), each as planned, every NIC" \
  "sent; both planned trees ran across hosts"
