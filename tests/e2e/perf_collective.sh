#!/usr/bin/env bash
# braid-perf COLLECTIVE over several ranks, held to nccl-tests' conventions. COLLECTIVE may be a
# comma-separated list, which braid-perf runs in one process, a table each on the same ranks:
# every table is checked as below, so that one run covers what a run per collective would, at one
# start and one communicator's creation (most of a run across hosts). It exits 0, its header
# lists every rank, and its table has one section per type (-d), operator (-o, reducing collectives
# only) and root (-r, rooted collectives only), "all" and -r -1 expanding as nccl-tests expands
# them, in nccl-tests' order (types, then operators, then roots). Each section has one row per size
# of the sweep with the size, count, type, redop and root columns nccl-tests prints, and #wrong 0 in
# both columns: N/A in place for alltoall and sendrecv, which braid-perf does not run in place
# (their sends would read what their receives write). braid's variable-count collectives
# (all_gatherv, reduce_scatterv, alltoallv) print the rows of their uniform twins (size: the total;
# count: the mean block); alltoallv has no in-place form either, so its in-place cells read N/A.
#
# usage: perf_collective.sh BRAID_PERF COLLECTIVE[,COLLECTIVE...] NRANKS MINBYTES MAXBYTES FACTOR
#        [flags...]
# (sizes in plain bytes; -d, -o and -r are read from the flags, with braid-perf's defaults)
# With E2E_HOSTS=K set, the NRANKS ranks are processes of K "hosts" of this machine (lib.sh's
# run_on_hosts: BRAID_HOSTID), connected by braid's socket transport, or by its verbs transport
# over the emulated HCA where BRAID_IB_EMULATE is set, and rank 0 must say which (and log the
# line E2E_EXPECT_LINE says once, where set); with
# E2E_USE_NETNS=1 too, each host is a network namespace of its own (lib.sh's netns_hosts); with
# E2E_EXPECT_NET_PLUGIN, a network plugin (NCCL_NET_PLUGIN) carries it instead. With
# E2E_EXPECT_GDR=device, every rank's GPU FIFOs must have moved bytes through device-memory
# registrations (GPUDirect RDMA) and staged none through host memory; with staged, the reverse.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -ge 6 ]] || fail "usage: $0 BRAID_PERF COLLECTIVE NRANKS MINBYTES MAXBYTES FACTOR [flags...]"
perf=$1 list=$2 nranks=$3 min=$4 max=$5 factor=$6
shift 6
out=$E2E_TMP/out err=$E2E_TMP/err
IFS=, read -r -a colls <<<"$list"
# One run for the whole list: E2E_RUN_LIMIT_S (lib.sh's hang guard, 60 s a run) grows with it.
((${#colls[@]} == 1)) || E2E_RUN_LIMIT_S=$((E2E_RUN_LIMIT_S + 20 * (${#colls[@]} - 1)))

all_types="int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2"
all_ops="sum prod max min avg"
types=float ops=sum root=0
args=("$@")
for ((i = 0; i + 1 < ${#args[@]}; i++)); do
  case ${args[i]} in
    -d) types=${args[i + 1]} ;;
    -o) ops=${args[i + 1]} ;;
    -r) root=${args[i + 1]} ;;
  esac
done
[[ $types == all ]] && types=$all_types
[[ $ops == all ]] && ops=$all_ops
asked_ops=$ops

# shape_of COLLECTIVE: the sections and cells its table has: ops, roots, split, in_place_wrong.
shape_of() {
  local coll=$1
  ops=$asked_ops
  case $coll in
    all_reduce | reduce_scatter | reduce | reduce_scatterv) ;;
    *) ops=none ;;
  esac
  case $coll in
    broadcast | reduce | gather | scatter)
      roots=$root
      [[ $root == -1 ]] && roots=$(seq 0 $((nranks - 1)))
      ;;
    *) roots=-1 ;;
  esac
  # Collectives that split the buffer among ranks give each a whole number of 16-byte units.
  case $coll in
    all_gather | reduce_scatter | alltoall | gather | scatter) split=1 ;;
    all_gatherv | reduce_scatterv | alltoallv) split=1 ;;
    *) split=0 ;;
  esac
  case $coll in
    alltoall | sendrecv | alltoallv) in_place_wrong=N/A ;;
    *) in_place_wrong=0 ;;
  esac
}

# The rows nccl-tests would print, without the measurements: size count type redop root.
expected_rows() {
  local type op r size elem count share unit
  for type in $types; do
    elem=$(type_size "$type")
    for op in $ops; do
      for r in $roots; do
        for ((size = min; size <= max; size *= factor)); do
          count=$((size / elem))
          if ((split)); then
            unit=$((elem < 16 ? 16 / elem : 1))
            share=$((count / nranks / unit * unit))
            echo "$((share * nranks * elem)) $share $type $op $r"
          else
            echo "$((count * elem)) $count $type $op $r"
          fi
        done
      done
    done
  done
}

# expect_gdr device|staged ERR NRANKS: each rank's log (ERR, ERR.1 ...) has the verbs transport's (or plugin's)
# count of its GPU FIFOs' bytes, all through device memory or all staged, and says so at INFO.
expect_gdr() {
  local want=$1 err=$2 n=$3 r log line device staged flushes
  for ((r = 0; r < n; r++)); do
    log=$(rank_file "$err" "$r")
    line=$(grep -E '(verbs|NET plugin .*): GPU FIFOs moved' "$log" | tail -1)
    [[ -n $line ]] || fail "rank $r did not count its GPU FIFOs' bytes" "$log"
    device=$(sed -n 's/.*moved \([0-9]*\) bytes through device-memory.*/\1/p' <<<"$line")
    staged=$(sed -n 's/.*, \([0-9]*\) staged through host memory.*/\1/p' <<<"$line")
    if [[ $want == device ]]; then
      ((device > 0 && staged == 0)) || fail "rank $r: $line (expected no staged byte)" "$log"
      grep -q "GPU Direct RDMA Enabled for GPU" "$log" || fail "rank $r: no 'Enabled' line" "$log"
      # NCCL_NET_FORCE_FLUSH: every slot received into device memory was flushed (an RDMA read).
      flushes=$(sed -n 's/.*; \([0-9]*\) flushes.*/\1/p' <<<"$line")
      [[ ${NCCL_NET_FORCE_FLUSH:-0} == 0 ]] || ((flushes > 0)) ||
        fail "rank $r: $line (expected flushes under NCCL_NET_FORCE_FLUSH=1)" "$log"
    else
      ((staged > 0 && device == 0)) || fail "rank $r: $line (expected all staged)" "$log"
      grep -q "GPU Direct RDMA Disabled for GPU" "$log" || fail "rank $r: no 'Disabled' line" "$log"
    fi
  done
}

if [[ -n ${E2E_HOSTS:-} ]]; then
  [[ -z ${E2E_USE_NETNS:-} ]] || netns_hosts "$E2E_HOSTS"
  run_on_hosts "$out" "$err" "$E2E_HOSTS" "$nranks" "$perf" "$list" -b "$min" -e "$max" \
    -f "$factor" "$@"
  expect_success "$out" "$err"
  listening="network: $E2E_HOSTS hosts; listening on"
  [[ -z ${BRAID_NETNS_IPV6:-} ]] || listening="$listening \[fd77::1\]"
  grep -q "$listening" "$err" || fail "rank 0 did not report $E2E_HOSTS hosts ($listening)" "$err"
  transport="network: socket transport"
  [[ ${BRAID_NET:-} != IB ]] || transport="network: verbs transport on"
  [[ -z ${BRAID_IB_EMULATE:-} ]] || transport="network: verbs transport on emu_0:1"
  # A network plugin: E2E_EXPECT_NET_PLUGIN is the start of its "NAME (vN," as braid names it.
  [[ -z ${E2E_EXPECT_NET_PLUGIN:-} ]] || transport="network: NET plugin $E2E_EXPECT_NET_PLUGIN"
  grep -q "$transport" "$err" || fail "rank 0 did not report '$transport'" "$err"
  # A line rank 0 must log once besides (E2E_EXPECT_LINE): a device the verbs transport skipped.
  if [[ -n ${E2E_EXPECT_LINE:-} ]]; then
    lines=$(grep -c -- "$E2E_EXPECT_LINE" "$err" || true)
    ((lines == 1)) || fail "rank 0 logged '$E2E_EXPECT_LINE' $lines times, not once" "$err"
  fi
  [[ -z ${E2E_EXPECT_GDR:-} ]] || expect_gdr "$E2E_EXPECT_GDR" "$err" "$nranks"
  # The FIFOs' size (comm/links.cc): with BRAID_BUFFSIZE unset, 32 MiB (slots of 4 MiB) where a
  # host communicator has one rank per host and a host runs more threads than it has CPUs (the
  # rank and two proxies per channel, on the CPUs this machine gives the unbound ranks), 4 MiB
  # otherwise (GPU communicators among them).
  if [[ -z ${BRAID_BUFFSIZE:-}${NCCL_BUFFSIZE:-} ]]; then
    slot=524288
    if ! grep -q "channels from the device" "$err"; then
      channels=$(sed -n 's/.*; \([0-9]*\) channel(s); .*/\1/p' "$err" | head -1)
      [[ -n $channels ]] || fail "rank 0 did not report its channels and FIFOs" "$err"
      ((nranks == E2E_HOSTS && 1 + 2 * channels > $(nproc))) && slot=4194304
    fi
    grep -q "fifo 8 x $slot bytes" "$err" ||
      fail "rank 0's FIFOs are not of 8 slots x $slot bytes (${channels:-device} channels, $(nproc) CPUs)" \
        "$err"
  fi
else
  run_perf "$out" "$err" "$perf" "$list" -b "$min" -e "$max" -f "$factor" "$@"
  expect_success "$out" "$err"
fi
# The output has one table a collective, each after its own header, in the order of the list.
tables=$(grep -c '^# braid-perf ' "$out" || true)
((tables == ${#colls[@]})) || fail "$tables tables printed, expected ${#colls[@]} ($list)" "$out"
rows=0
for ((t = 0; t < ${#colls[@]}; t++)); do
  coll=${colls[t]}
  table=$E2E_TMP/table.$t
  awk -v t="$t" '/^# braid-perf / { n++ } n == t + 1' "$out" >"$table"
  head -1 "$table" | grep -q "^# braid-perf $coll: " ||
    fail "table $((t + 1)) is not $coll's" "$table"
  shape_of "$coll"
  listed=$(grep -c '^#  Rank ' "$table" || true)
  [[ $listed -eq $nranks ]] || fail "$coll: header lists $listed ranks, expected $nranks" "$table"
  # A row: size count type redop root, then time algbw busbw #wrong twice.
  awk '!/^#/ && NF == 13 { print $1, $2, $3, $4, $5 }' "$table" >"$E2E_TMP/got"
  expected_rows >"$E2E_TMP/want"
  diff "$E2E_TMP/want" "$E2E_TMP/got" >"$E2E_TMP/diff" ||
    fail "$coll: rows (size count type redop root) differ from nccl-tests' (< expected, > printed)" \
      "$E2E_TMP/diff" "$table"
  awk -v inplace="$in_place_wrong" '!/^#/ && NF == 13 && ($9 != "0" || $13 != inplace)' \
    "$table" >"$E2E_TMP/bad"
  [[ ! -s $E2E_TMP/bad ]] ||
    fail "$coll: rows whose #wrong is not 0 out of place and $in_place_wrong in place" \
      "$E2E_TMP/bad" "$table"
  grep -q '^# Wrong elements *: 0 OK' "$table" ||
    fail "$coll: no '# Wrong elements : 0 OK' line" "$table"
  rows=$((rows + $(wc -l <"$E2E_TMP/got")))
done
echo "PASS [$E2E_NAME]: $list, $nranks ranks, $rows rows, #wrong 0"
