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
#   - tree all_reduce runs the planned trees, a tree per rail (two where there are two NICs, as
#     many as NICs beyond): each edge between hosts on its planned NIC, and the trees' edges
#     together on every NIC;
#   - all-to-all, which no ring or tree plans: every FIFO end on the NIC the topology gives it,
#     each rank receiving on its own nearest NIC ("from rank S via emu_K:1 (nearest)"), the
#     ranks of a host on all NICS NICs, and each send on the sender's own NIC ("(nearest)") or
#     on the receiver's ("(the peer's rail...)", NCCL's PXN on the 8-GPU machine);
#   - the cost model's network is what the planned rings move ("cost model: the planned rings").
# The environment may add a topology file and emulated GPUs (NCCL's 8-GPU 8-NIC machine), and
# E2E_EXPECT_PXN=1 where some all-to-all send must take its peer's rail through PXN.
#
# usage: perf_rails.sh BRAID_PERF NRANKS NICS
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 3 ]] || fail "usage: $0 BRAID_PERF NRANKS NICS"
perf=$1 nranks=$2 nics=$3
export BRAID_IB_EMULATE=$nics BRAID_NET=IB BRAID_DEBUG=INFO
export E2E_RUN_LIMIT_S=${E2E_RUN_LIMIT_S:-100}

log_of() { if (($1 == 0)); then echo "$E2E_TMP/err"; else echo "$E2E_TMP/err.$1"; fi; }

# run ALGO [COLLECTIVE]: all_reduce (or COLLECTIVE) of 4 MiB, checked, on every rank.
run() {
  BRAID_ALGO=$1 run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" 2 "$nranks" "$perf" \
    "${2:-all_reduce}" -b 4M -e 4M -n 2 -w 1 -c 1
  ((RUN_RC == 0)) || fail "a rank failed ($1)" "$E2E_TMP/out" "$E2E_TMP/err"
  grep -Eq '^ +4194304 ' "$E2E_TMP/out" && grep -Eq '^# Wrong elements +: 0 OK' "$E2E_TMP/out" ||
    fail "no checked 4 MiB row without errors ($1 ${2:-all_reduce})" "$E2E_TMP/out"
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
expected_trees=2
((nics <= 2)) || expected_trees=$((nics % 2 == 0 ? nics : 2 * nics))
[[ $(wc -l <<<"$trees") -eq $expected_trees ]] ||
  fail "rank 0 does not name $expected_trees trees between hosts (one per rail)" "$E2E_TMP/err"
tree_nics=""
while read -r line; do
  tree=$(sed -E 's/topology: tree ([0-9]+) .*/\1/' <<<"$line")
  read -r from to nic <<<"$(grep -oE '[0-9]+->[0-9]+ \([^ ]+ to' <<<"$line" |
    sed -E 's/([0-9]+)->([0-9]+) \(([^ ]+) to/\1 \2 \3/')"
  opened "$from" to "$to" "$tree" "$nic" >/dev/null
  tree_nics+="$nic "
done <<<"$trees"
tree_rails=$(tr ' ' '\n' <<<"$tree_nics" | grep . | sort -u | wc -l)
((tree_rails == nics)) || fail "the trees between hosts use $tree_rails NIC(s) ($tree_nics), not all $nics" \
  "$E2E_TMP/err"

# All-to-all: no ring or tree plans its FIFOs; each end takes the NIC the topology gives it.
run ring alltoall
# own RANK: the port RANK receives on, its own nearest NIC (the same for every FIFO from
# another host).
own() {
  local nics_of
  nics_of=$(grep -oE "channel -?[0-9]+: from rank [0-9]+ via [^ ]+ \(nearest\)" "$(log_of "$1")" |
    sed -E 's/.* via ([^ ]+) .*/\1/' | sort -u)
  [[ -n $nics_of ]] || fail "rank $1 names no all-to-all FIFO end on its nearest NIC" "$(log_of "$1")"
  [[ $(wc -l <<<"$nics_of") -eq 1 ]] || fail "rank $1 receives on several NICs: $nics_of" \
    "$(log_of "$1")"
  echo "$nics_of"
}
declare -A own_nic
for ((r = 0; r < nranks; r++)); do own_nic[$r]=$(own "$r"); done
for host in 0 1; do
  used=$(for ((r = host * nranks / 2; r < (host + 1) * nranks / 2; r++)); do
    echo "${own_nic[$r]}"; done | sort -u | wc -l)
  ((used == nics)) || fail "host $host's ranks receive on $used NIC(s), not all $nics" "$E2E_TMP/err"
done
sends=0 pxn=0
for ((r = 0; r < nranks; r++)); do
  while read -r line; do
    [[ -n $line ]] || continue
    read -r peer port how <<<"$(sed -E 's/.*to rank ([0-9]+) via ([^ ]+) \(([^)]*)\).*/\1 \2 \3/' <<<"$line")"
    if [[ $how == nearest ]]; then
      [[ $port == "${own_nic[$r]}" ]] || fail "rank $r sends to rank $peer on $port, not its own ${own_nic[$r]}" "$(log_of "$r")"
    else
      [[ $port == "${own_nic[$peer]}" ]] ||
        fail "rank $r sends to rank $peer on $port, not the peer's rail ${own_nic[$peer]}: $line" "$(log_of "$r")"
    fi
    sends=$((sends + 1))
    [[ $how != *"PXN relay"* ]] || pxn=$((pxn + 1))
  done <<<"$(grep -oE "channel -?[0-9]+: to rank [0-9]+ via [^ ]+ \((nearest|the peer's rail[^)]*)\)" "$(log_of "$r")" || true)"
done
((sends > 0)) || fail "no all-to-all FIFO end names how its NIC was chosen" "$E2E_TMP/err"
# On NCCL's 8-GPU machine (E2E_EXPECT_PXN=1) a send to another GPU index goes PXN's way.
((${E2E_EXPECT_PXN:-0} == 0 || pxn > 0)) || fail "no all-to-all send took the peer's rail by PXN" \
  "$E2E_TMP/err"
echo "PASS [$E2E_NAME]: $channels channels on $nics rails (${rails% }), each as planned, every" \
  "NIC sent; $expected_trees planned trees ran across hosts on all $nics NICs; $sends all-to-all" \
  "sends each on its own or its peer's rail ($pxn by PXN), every rank receiving on its nearest NIC; the" \
  "model's network $fitted GB/s as planned"
