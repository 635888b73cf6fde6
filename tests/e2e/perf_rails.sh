#!/usr/bin/env bash
# Channels on their rails: 2 hosts of NRANKS / 2 ranks, each host with NICS NICs of the emulated
# HCA (BRAID_IB_EMULATE=NICS), run all_reduce over verbs. The topology search plans the rings
# (rank 0 says each channel's hops between hosts and their NICs, "topology: channel C between
# hosts:"), and this checks, from every rank's log:
#   - each channel leaves and enters every host by NICs of one rail (the same name on both
#     hosts), and the channels use all NICS rails;
#   - what runs is what was planned: each planned hop's sender opened its FIFO end on the
#     planned NIC ("channel C: to rank R via emu_K:1 (planned)", with "as mlx5_K" where a
#     topology file names the NIC otherwise) and its receiver too ("from rank ...");
#   - every NIC of both hosts carried traffic: each planned hop's sender's emulated HCA counted
#     bytes sent on that NIC ("emulated HCA emu_K:1: N bytes transmitted"), as a real port's
#     port_xmit_data counter would;
#   - tree all_reduce runs the two planned trees: each edge between hosts on its planned NIC;
#   - the cost model's network is what the planned rings move ("cost model: the planned rings").
# The environment may add a topology file and emulated GPUs (NCCL's 8-GPU 8-NIC machine).
#
# usage: perf_rails.sh BRAID_PERF NRANKS NICS
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 3 ]] || fail "usage: $0 BRAID_PERF NRANKS NICS"
perf=$1 nranks=$2 nics=$3
export BRAID_IB_EMULATE=$nics BRAID_NET=IB BRAID_DEBUG=INFO
export E2E_RUN_LIMIT_S=${E2E_RUN_LIMIT_S:-100}

log_of() { if (($1 == 0)); then echo "$E2E_TMP/err"; else echo "$E2E_TMP/err.$1"; fi; }

# run ALGO: all_reduce of 4 MiB, checked, on every rank.
run() {
  BRAID_ALGO=$1 run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" 2 "$nranks" "$perf" all_reduce \
    -b 4M -e 4M -n 2 -w 1 -c 1
  ((RUN_RC == 0)) || fail "a rank failed ($1)" "$E2E_TMP/out" "$E2E_TMP/err"
  grep -Eq '^ +4194304 .* 0$' "$E2E_TMP/out" || fail "no checked 4 MiB row without errors ($1)" \
    "$E2E_TMP/out"
}

# opened RANK DIRECTION PEER CHANNEL NIC: the port RANK opened its FIFO end on, where that end
# is the one the plan gave NIC; fails otherwise.
opened() {
  local line
  line=$(grep -oE "channel $4: $2 rank $3 via [^ ]+ \(planned\)( as [^ ]+)?" "$(log_of "$1")" |
    head -1)
  [[ -n $line ]] || fail "rank $1 did not open channel $4's FIFO $2 rank $3 as planned" \
    "$(log_of "$1")"
  [[ $line == *" via $5 (planned)" || $line == *" as $5" ]] ||
    fail "rank $1 opened channel $4's FIFO $2 rank $3 elsewhere than $5: $line" "$(log_of "$1")"
  sed -E 's/.* via ([^ ]+) .*/\1/' <<<"$line"
}

run ring
# The cost model's hop between hosts is what the planned rings move (tune::Model::fitNetwork):
# rank 0 gives the figure of the plan's summary.
planned=$(grep -oE 'rings: [0-9]+ channel\(s\), [0-9.]+ GB/s' "$E2E_TMP/err" | head -1 |
  sed -E 's/.*, ([0-9.]+) GB\/s/\1/')
fitted=$(grep -oE 'cost model: the planned rings move [0-9.]+ GB/s' "$E2E_TMP/err" | head -1 |
  sed -E 's/.* move ([0-9.]+) GB\/s/\1/')
[[ -n $planned && -n $fitted ]] ||
  fail "rank 0 gives no planned rings' bandwidth (${planned:-none}) or fitted network (${fitted:-none})" "$E2E_TMP/err"
awk -v a="$planned" -v b="$fitted" 'BEGIN { exit !(a > 0 && b > 0.95 * a && b < 1.05 * a) }' ||
  fail "the cost model's network ($fitted GB/s) is not the planned rings' ($planned GB/s)" "$E2E_TMP/err"
plan=$(grep -o 'topology: channel [0-9]* between hosts:.*' "$E2E_TMP/err" || true)
[[ -n $plan ]] || fail "rank 0 says no channel between hosts (no NICs planned?)" "$E2E_TMP/err"
channels=0 rails=""
while read -r line; do
  channel=$(sed -E 's/topology: channel ([0-9]+) .*/\1/' <<<"$line")
  # Hops as "A->B (NIC to NIC)".
  hops=$(grep -oE '[0-9]+->[0-9]+ \([^ ]+ to [^ ]+\)' <<<"$line")
  [[ $(wc -l <<<"$hops") -eq 2 ]] || fail "channel $channel does not cross between hosts twice: $line"
  names=$(grep -oE '\([^ ]+ to [^ ]+\)' <<<"$hops" | tr -d '()' | tr ' ' '\n' | grep -v '^to$' |
    sort -u)
  [[ $(wc -l <<<"$names") -eq 1 ]] || fail "channel $channel crosses rails: $line"
  rails+="$names "
  while read -r hop; do
    read -r from to nic <<<"$(sed -E 's/([0-9]+)->([0-9]+) \(([^ ]+) to .*/\1 \2 \3/' <<<"$hop")"
    port=$(opened "$from" to "$to" "$channel" "$nic")
    opened "$to" from "$from" "$channel" "$nic" >/dev/null
    sent=$(grep -oE "emulated HCA $port: [0-9]+ bytes transmitted" "$(log_of "$from")" |
      grep -oE '[0-9]+ bytes' | grep -oE '[0-9]+' | tail -1)
    [[ -n $sent && $sent -gt 0 ]] ||
      fail "rank $from's $port carried no bytes for channel $channel" "$(log_of "$from")"
  done <<<"$hops"
  channels=$((channels + 1))
done <<<"$plan"
distinct=$(tr ' ' '\n' <<<"$rails" | grep . | sort -u | wc -l)
((distinct == nics)) ||
  fail "$channels channel(s) on $distinct rail(s) ($rails): expected all $nics NICs" "$E2E_TMP/err"

# Tree all_reduce across hosts runs the planned trees (a chain in each host, a tree between the
# hosts' heads): channel T runs tree T, each edge between hosts opened on its planned NIC.
run tree
trees=$(grep -o 'topology: tree [0-9]* between hosts:.*' "$E2E_TMP/err" || true)
[[ $(wc -l <<<"$trees") -eq 2 ]] || fail "rank 0 does not name two trees between hosts" "$E2E_TMP/err"
while read -r line; do
  tree=$(sed -E 's/topology: tree ([0-9]+) .*/\1/' <<<"$line")
  read -r from to nic <<<"$(grep -oE '[0-9]+->[0-9]+ \([^ ]+ to' <<<"$line" |
    sed -E 's/([0-9]+)->([0-9]+) \(([^ ]+) to/\1 \2 \3/')"
  opened "$from" to "$to" "$tree" "$nic" >/dev/null
done <<<"$trees"
echo "PASS [$E2E_NAME]: $channels channels on $nics rails (${rails% }), each as planned, every" \
  "NIC sent; both planned trees ran across hosts; the model's network $fitted GB/s as planned"
