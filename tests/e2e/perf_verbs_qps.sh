#!/usr/bin/env bash
# Queue pairs per connection on the connection's own NIC: 2 hosts x 2 ranks, 2 emulated NICs a
# host, NCCL_IB_QPS_PER_CONNECTION=4 (and NCCL_IB_SPLIT_DATA_ON_QPS=SPLIT), all_reduce of 4 MiB
# checked. Every rank names each FIFO end's NIC ("channel C: to rank R via emu_K:1"), and its
# emulated HCA, as it closes, how many queue pairs were made on each NIC and how many of them
# sent ("emulated HCA emu_K:1: ... N queue pair(s) made, M of them sent"). On each NIC of each
# rank exactly 4 x (the FIFO ends named on it) were made, so every pair of every connection is on
# that connection's NIC (before: 4 pairs spread over both NICs); and on each NIC that sent data
# (more than a MiB: a receiving end sends only its 4-byte credits, on one pair) at least 4 pairs
# sent, so a data-carrying connection's pairs all carried it (split: a part of every slot; else
# whole slots in turn). Ends made but idle (a tree's, under a ring all_reduce) send nothing.
#
# usage: perf_verbs_qps.sh BRAID_PERF SPLIT
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -eq 2 ]] || fail "usage: $0 BRAID_PERF SPLIT"
perf=$1 split=$2 qps=4 nranks=4
# Three channels on two rails: a rank's NICs carry unequal numbers of FIFO ends, so pairs spread
# over both NICs (as before) would not add up to 4 per end on each.
export BRAID_IB_EMULATE=2 BRAID_NET=IB BRAID_DEBUG=INFO BRAID_NCHANNELS=3
export NCCL_IB_QPS_PER_CONNECTION=$qps NCCL_IB_SPLIT_DATA_ON_QPS=$split
export E2E_RUN_LIMIT_S=${E2E_RUN_LIMIT_S:-100}

log_of() { if (($1 == 0)); then echo "$E2E_TMP/err"; else echo "$E2E_TMP/err.$1"; fi; }

run_on_hosts "$E2E_TMP/out" "$E2E_TMP/err" 2 "$nranks" "$perf" all_reduce -b 4M -e 4M -n 2 -w 1 -c 1
((RUN_RC == 0)) || fail "a rank failed" "$E2E_TMP/out" "$E2E_TMP/err"
grep -Eq '^# Wrong elements +: 0 OK' "$E2E_TMP/out" || fail "wrong elements" "$E2E_TMP/out"

grep -q "ib_qps_per_connection=$qps ib_split_data_on_qps=$split" "$E2E_TMP/err" ||
  fail "rank 0's config does not say $qps queue pairs, split $split" "$E2E_TMP/err"
nic_lines=0 data_nics=0 uneven=0
for ((r = 0; r < nranks; r++)); do
  log=$(log_of "$r")
  per_nic=""
  for nic in emu_0:1 emu_1:1; do
    ends=$(grep -cE "channel -?[0-9]+: (to|from) rank [0-9]+ via $nic( |$)" "$log" || true)
    line=$(grep -oE "emulated HCA $nic: [0-9]+ bytes transmitted, [0-9]+ received; [0-9]+ queue pair\(s\) made, [0-9]+ of them sent" "$log" | tail -1)
    [[ -n $line ]] || fail "rank $r's emulated HCA says nothing of $nic's queue pairs" "$log"
    read -r bytes made sent <<<"$(sed -E 's/.*: ([0-9]+) bytes transmitted.*; ([0-9]+) queue pair\(s\) made, ([0-9]+) of them sent/\1 \2 \3/' <<<"$line")"
    ((made == qps * ends)) ||
      fail "rank $r made $made queue pairs on $nic for $ends FIFO end(s) on it: not $qps each" "$log"
    if ((bytes > 1048576)); then
      data_nics=$((data_nics + 1))
      ((sent >= qps)) || fail "rank $r's $nic sent $bytes bytes on $sent queue pair(s), not $qps" "$log"
    fi
    nic_lines=$((nic_lines + ends))
    per_nic+="$ends "
  done
  read -r e0 e1 <<<"$per_nic"
  ((e0 == e1)) || uneven=$((uneven + 1))
done
((uneven > 0)) || fail "every rank has as many FIFO ends on each NIC: the count proves nothing" \
  "$E2E_TMP/err"
((nic_lines > 0 && data_nics > 0)) || fail "no FIFO end named its NIC, or no NIC sent data" "$E2E_TMP/err"
echo "PASS [$E2E_NAME]: $nic_lines FIFO ends, each with its $qps queue pairs on its own NIC" \
  "(split $split); on each of the $data_nics NICs that sent data, all $qps pairs of a connection sent"
