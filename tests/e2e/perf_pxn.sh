#!/usr/bin/env bash
# PXN's relay (transport/net/ib/ib_relay.h): 2 network-namespace hosts of NCCL's 8-GPU 8-NIC
# machine (its topology file; 8 emulated GPUs and 8 emulated NICs a host), NRANKS / 2 GPU ranks
# a host, run all-to-all and send/recv over verbs, every result checked (braid-perf -c 1).
#
# MODE relay (PXN on, the default): a send to a rank of another GPU index takes the receiver's
# rail through the NVLink peer nearest it. This checks, from every rank's log:
#   - each such send end says it goes through its relay's process ("to rank D through PXN relay
#     rank P's process on emu_K:1"), on the receiver's own NIC (where the receiver's log says it
#     receives from that sender);
#   - the relay's process made that relay ("PXN relay: rank P relays rank S's FIFO to rank D")
#     and, closing, posted bytes for it on that NIC ("... on emu_K:1: N bytes posted by this
#     process"), N > 0;
#   - every process posted on no NIC but its own ("verbs: bytes posted by this process"): its
#     own FIFOs' bytes and those it relayed, all on its nearest NIC; the relayed bytes > 0, and
#     the emulated HCA of each process transmitted nothing on any other NIC: the senders posted
#     nothing themselves for their relayed FIFOs.
#   - where the relay's slots are: E2E_RELAY_SLOTS=device (the default: the DGX file's GPUs sit
#     beside their NICs, so GPUDirect RDMA applies) has every relay's in its GPU's memory,
#     registered by dmabuf, and no process staging any byte through host memory; staged (with
#     NCCL_NET_GDR_LEVEL=LOC) has them in the relay's pinned host memory.
# MODE direct (NCCL_PXN_DISABLE=1 with NCCL_CROSS_NIC=0): the same sends take the receiver's rail
# from the sender's own process: no relay anywhere, and each sender posted its own bytes on the
# rails of its receivers.
#
# usage: perf_pxn.sh BRAID_PERF NRANKS MODE
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 3 ]] || fail "usage: $0 BRAID_PERF NRANKS relay|direct"
perf=$1 nranks=$2 mode=$3
[[ $mode == relay || $mode == direct ]] || fail "MODE is relay or direct, not $mode"
export BRAID_IB_EMULATE=8 BRAID_EMULATE_GPUS=8 BRAID_NET=IB BRAID_DEBUG=INFO
export BRAID_TOPO_FILE=${BRAID_TOPO_FILE:?the DGX-like topology file}
export E2E_RUN_LIMIT_S=${E2E_RUN_LIMIT_S:-100}
if [[ $mode == direct ]]; then
  export NCCL_PXN_DISABLE=1 NCCL_CROSS_NIC=0
fi
slots=${E2E_RELAY_SLOTS:-device}
case $slots in
  device) slots_in="device memory (dmabuf)" ;;
  staged)
    slots_in="pinned host memory (staged)"
    export NCCL_NET_GDR_LEVEL=LOC
    ;;
  *) fail "E2E_RELAY_SLOTS is device or staged, not $slots" ;;
esac
netns_hosts 2

log_of() { if (($1 == 0)); then echo "$E2E_TMP/err"; else echo "$E2E_TMP/err.$1"; fi; }

# run COLLECTIVE: 4 MiB of it, checked, on every rank.
run() {
  run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" 2 "$nranks" "$perf" "$1" -b 4M -e 4M -n 2 -w 1 -c 1
  ((RUN_RC == 0)) || fail "a rank failed ($1)" "$E2E_TMP/out" "$E2E_TMP/err"
  grep -Eq '^ +4194304 ' "$E2E_TMP/out" && grep -Eq '^# Wrong elements +: 0 OK' "$E2E_TMP/out" ||
    fail "no checked 4 MiB row without errors ($1)" "$E2E_TMP/out"
}

# own RANK: the port RANK receives on, its own nearest NIC, where it names one: as a receiver
# from another host, a sender on its own NIC, or a relay.
own() {
  { grep -oE "channel -1: (from|to) rank [0-9]+ via [^ ]+ \(nearest\)" "$(log_of "$1")" |
      sed -E 's/.* via ([^ ]+) .*/\1/'
    grep -oE "PXN relay: rank $1 relays .* on [^ ,]+," "$(log_of "$1")" |
      sed -E 's/.* on ([^ ,]+),/\1/'; } | sort -u | head -1 || true
}

# check COLLECTIVE: what the logs of its run say of the relays.
check() {
  local r relays=0 direct_rails=0 peer relay port line posted
  declare -A relay_ranks
  # Every rank names its own in all-to-all, which runs first; sendrecv keeps them.
  for ((r = 0; r < nranks; r++)); do
    [[ -n ${own_nic[$r]:-} ]] || own_nic[$r]=$(own "$r")
  done
  for ((r = 0; r < nranks; r++)); do
    while read -r line; do
      [[ -n $line ]] || continue
      read -r peer relay port <<<"$(sed -E 's/.*to rank ([0-9]+) through PXN relay rank ([0-9]+).s process on ([^ ]+).*/\1 \2 \3/' <<<"$line")"
      [[ $mode == relay ]] || fail "rank $r sent through a relay with PXN disabled: $line" "$(log_of "$r")"
      [[ $port == "${own_nic[$peer]}" ]] ||
        fail "rank $r's relay to rank $peer posts on $port, not the receiver's ${own_nic[$peer]}" "$(log_of "$r")"
      [[ $port == "${own_nic[$relay]}" ]] ||
        fail "rank $r's relay rank $relay posts on $port, not its own NIC" "$(log_of "$relay")"
      grep -q "PXN relay: rank $relay relays rank $r's FIFO to rank $peer (channel -1) on $port, its slots in $slots_in" \
        "$(log_of "$relay")" || fail "rank $relay does not say it relays rank $r's FIFO to $peer with its slots in $slots_in" \
        "$(log_of "$relay")"
      posted=$(grep -oE "PXN relay: rank $r's FIFO to rank $peer \(channel -1\) on $port: [0-9]+ bytes posted" \
        "$(log_of "$relay")" | grep -oE '[0-9]+ bytes' | grep -oE '[0-9]+' | tail -1)
      [[ -n $posted && $posted -gt 0 ]] ||
        fail "rank $relay posted no bytes of rank $r's relayed FIFO to rank $peer" "$(log_of "$relay")"
      relays=$((relays + 1))
      relay_ranks[$relay]=1
    done <<<"$(grep -oE "channel -1: to rank [0-9]+ through PXN relay rank [0-9]+'s process on [^ ]+ " "$(log_of "$r")" || true)"
  done
  for ((r = 0; r < nranks; r++)); do
    # What this process posted, by port: on its own NIC only where relays carry every send to
    # another rail; on the receivers' rails too where it sends there itself.
    # (None where it sent nothing across hosts, as most ranks of sendrecv's ring.)
    line=$(grep -oE 'verbs: bytes posted by this process: .*' "$(log_of "$r")" | tail -1 || true)
    local relayed_here=0
    while read -r port own_bytes relayed; do
      [[ -n $port ]] || continue
      relayed_here=$((relayed_here + relayed))
      if [[ $port != "${own_nic[$r]}" ]]; then
        [[ $mode == direct ]] || fail "rank $r posted $own_bytes + $relayed bytes on $port, not its own NIC ${own_nic[$r]}: $line" "$(log_of "$r")"
        ((relayed == 0 && own_bytes > 0)) || fail "rank $r relayed on $port, or posted nothing there: $line" "$(log_of "$r")"
        direct_rails=$((direct_rails + 1))
      fi
    done <<<"$([[ -z $line ]] || sed -E 's/.*this process: //; s/, /\n/g' <<<"$line" |
      sed -E 's/^([^ ]+) ([0-9]+) own \+ ([0-9]+) relayed$/\1 \2 \3/')"
    if [[ $mode == relay && $slots == device ]]; then
      # (No count where a rank's GPU FIFOs never crossed hosts, as most of sendrecv's.)
      line=$(grep -oE 'verbs: GPU FIFOs moved [0-9]+ bytes through device-memory registrations, [0-9]+ staged' "$(log_of "$r")" | tail -1 || true)
      [[ -z $line && -z ${relay_ranks[$r]:-} ]] || [[ $line == *", 0 staged" ]] || fail "rank $r staged bytes through host memory ($1): ${line:-no count}" "$(log_of "$r")"
    fi
    if [[ $mode == relay ]]; then
      [[ -z ${relay_ranks[$r]:-} ]] || ((relayed_here > 0)) || fail "rank $r relayed no bytes for the ranks of its host ($1): $line" "$(log_of "$r")"
      # The emulated HCA counts what left each NIC of this process: nothing but its own.
      while read -r port sent; do
        [[ -n $port && $port != "${own_nic[$r]}" ]] || continue
        ((sent == 0)) || fail "rank $r's process transmitted $sent bytes on $port, not its NIC ($1)" "$(log_of "$r")"
      done <<<"$(grep -oE 'emulated HCA [^ ]+: [0-9]+ bytes transmitted' "$(log_of "$r")" |
        sed -E 's/emulated HCA ([^ ]+): ([0-9]+) .*/\1 \2/')"
    else
      ((relayed_here == 0)) || fail "rank $r relayed bytes with PXN disabled: $line" "$(log_of "$r")"
    fi
  done
  if [[ $mode == relay ]]; then
    ((relays > 0)) || fail "no send went through a PXN relay ($1)" "$E2E_TMP/err"
  else
    ((direct_rails > 0)) || fail "no sender posted on its receiver's rail itself ($1)" "$E2E_TMP/err"
  fi
  SUMMARY+="$1: $relays relayed FIFO(s), $direct_rails rail(s) posted directly; "
}

SUMMARY=""
declare -A own_nic
run alltoall
check alltoall
run sendrecv
check sendrecv
[[ $mode == direct ]] || SUMMARY+="relays' slots in $slots_in; "
echo "PASS [$E2E_NAME]: $mode, ${SUMMARY%; }; every result checked"
