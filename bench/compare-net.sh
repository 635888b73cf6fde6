#!/usr/bin/env bash
# all_reduce between two hosts, against the wire and the peers, in one run. The hosts are network
# namespaces of this machine joined by a bridge (scripts/lib/netns.sh), one rank per host, each
# with a host name of its own; everything crosses the same veth pair:
#   - the wire yardstick: iperf3's TCP throughput from host 0 to host 1 (Debian's iperf3), one way
#     and both ways at once (--bidir, the mean of the two directions: an all_reduce sends and
#     receives at once, and on this VM the two directions share the cores that move packets);
#   - braid: braid-perf all_reduce over braid's socket transport, one connection per FIFO and
#     striped over 2 threads x 2 connections (BRAID_SOCKET_NTHREADS, BRAID_NSOCKS_PERTHREAD);
#   - OpenMPI: bench/peers/mpi_allreduce_perf.c under mpirun with the TCP BTL on the veth, the
#     daemon of host 1 started in its namespace by an rsh agent;
#   - Gloo: torch.distributed's backend "gloo" (Debian's python3-torch), beside braid_torch in
#     the same job (bench/torch/allreduce_vs_gloo.py).
#   - braid encrypted: braid-perf all_reduce over the socket transport at 1 MiB and 64 MiB with
#     and without ncclSetEncryption (braid-perf --psk_file), taken in turn in the same repeats,
#     so that the encrypted column's cost is against the plain one of the same run.
# Prints Markdown tables: time at 8 B and 64 MiB (mean of timed iterations; braid-perf and the MPI
# peer print the same columns), busbw at 64 MiB against the wire, and the ratios; last, braid's
# 64 MiB busbw over iperf3's per-direction rate both ways at once (issue 29 asks for 0.9), out of
# place and in place as braid-perf times them (the mean of the timed calls), with its 8 B time
# beside it. iperf3's rates are yardsticks, what one program moves, not limits: braid has passed
# the both-ways one (docs/benchmarks.md). Root only.
#
# usage: bench/compare-net.sh   env: REPEAT (runs per figure, median shown; default 3);
#                                     ONLY=encryption: the encryption table alone (no iperf3,
#                                     OpenMPI or Gloo; builds braid-perf alone)
set -euo pipefail
source "$(dirname "$0")/../scripts/lib/common.sh"
source "$BRAID_ROOT/scripts/lib/netns.sh"
source "$(dirname "$0")/lib.sh"
REPEAT="${REPEAT:-3}"
ONLY="${ONLY:-}"
[[ $(id -u) -eq 0 ]] || { echo "compare-net: needs root (network namespaces)"; exit 1; }
[[ -z $ONLY || $ONLY == encryption ]] || { echo "compare-net: ONLY=encryption or nothing"; exit 1; }

if [[ $ONLY == encryption ]]; then
  braid_build braid-perf >/dev/null
else
  braid_install_deps
  braid_apt_install -- iperf3
  braid_build braid-perf mpi-allreduce-perf braid_torch >/dev/null
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp="$(mktemp -d)"
trap 'braid_netns_cleanup; rm -rf "$tmp"' EXIT
tag="n$$"
braid_netns_hosts "$tag" 2

# mpirun reaches host 1's namespace through this agent instead of ssh.
braid_netns_rsh_agent "$tmp/agent.sh"

row() { awk -v s="$2" '$1 == s { print $'"$3"'; exit }' "$1"; }  # file size column

# wire_gbs [--bidir]: GB/s from host 0 to host 1 (with --bidir: per direction, both at once).
wire_gbs() {
  braid_netns_exec 1 iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
  sleep 0.5
  braid_netns_exec 0 iperf3 -c 10.77.0.2 -p 5201 -t 3 -J "$@" | python3 -c '
import json, sys
end = json.load(sys.stdin)["end"]
ways = [end["sum_received"]] + ([end["sum_received_bidir_reverse"]] if "sum_received_bidir_reverse" in end else [])
print(sum(w["bits_per_second"] for w in ways) / len(ways) / 8e9)'
  wait
}

# braid_run / mpi_run NAME SIZE ITERS WARMUP [VAR=VALUE...]: one run at SIZE, outputs in $tmp.
braid_run() {
  local name=$1
  shift
  perf_across_hosts "$tmp/$name" "$@"
}
mpi_run() {
  local name=$1 size=$2 iters=$3 warmup=$4
  braid_netns_exec 0 mpirun -H 10.77.0.1:1,10.77.0.2:1 -np 2 --mca plm_rsh_agent "$tmp/agent.sh" \
    --mca oob_tcp_if_include bveth0 --mca btl_tcp_if_include bveth0 --mca btl tcp,self \
    "$BRAID_BUILD/bin/mpi-allreduce-perf" -b "$size" -e "$size" -n "$iters" -w "$warmup" \
    >"$tmp/$name" 2>&1
}

# The encryption table: all_reduce at 1 MiB and 64 MiB over the socket transport, plain and
# sealed (ncclSetEncryption through braid-perf --psk_file) in turn, each repeat both.
encryption_table() {
  local key="$tmp/psk" size r
  python3 -c 'import secrets; print(secrets.token_hex(32))' >"$key"
  declare -A PLAIN_US SEALED_US PLAIN_BUS SEALED_BUS
  declare -A E_ITERS=([1048576]=100 [67108864]=10) E_WARMUP=([1048576]=10 [67108864]=2)
  for ((r = 0; r < REPEAT; r++)); do
    for size in 1048576 67108864; do
      braid_run "plain.$size.$r" "$size" "${E_ITERS[$size]}" "${E_WARMUP[$size]}"
      PERF_EXTRA_ARGS=(--psk_file "$key")
      braid_run "sealed.$size.$r" "$size" "${E_ITERS[$size]}" "${E_WARMUP[$size]}"
      PERF_EXTRA_ARGS=()
    done
  done
  for size in 1048576 67108864; do
    PLAIN_US[$size]=$(for ((r = 0; r < REPEAT; r++)); do row "$tmp/plain.$size.$r.0" "$size" 6; done | median_in)
    SEALED_US[$size]=$(for ((r = 0; r < REPEAT; r++)); do row "$tmp/sealed.$size.$r.0" "$size" 6; done | median_in)
    PLAIN_BUS[$size]=$(for ((r = 0; r < REPEAT; r++)); do row "$tmp/plain.$size.$r.0" "$size" 8; done | median_in)
    SEALED_BUS[$size]=$(for ((r = 0; r < REPEAT; r++)); do row "$tmp/sealed.$size.$r.0" "$size" 8; done | median_in)
  done
  echo "Encryption (ncclSetEncryption: AES-256-GCM, keys by HKDF-SHA-256 per connection), braid-perf"
  echo "all_reduce over the socket transport, 2 hosts (network namespaces on $(uname -n), $(nproc) cores),"
  echo "1 rank each, $(date -u +%F); medians of $REPEAT runs, plain and encrypted in turn in each."
  echo
  echo "| size | plain (us) | encrypted (us) | plain busbw (GB/s) | encrypted busbw (GB/s) | encrypted / plain time |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
  for size in 1048576 67108864; do
    echo "| $((size >> 20)) MiB | ${PLAIN_US[$size]} | ${SEALED_US[$size]} | ${PLAIN_BUS[$size]} |" \
      "${SEALED_BUS[$size]} | $(python3 -c "print(f'{${SEALED_US[$size]} / ${PLAIN_US[$size]}:.2f}')") |"
  done
  echo
}
PERF_EXTRA_ARGS=()
if [[ $ONLY == encryption ]]; then
  encryption_table
  exit 0
fi

declare -A ITERS=([8]=1000 [67108864]=10) WARMUP=([8]=100 [67108864]=2)
declare -A BRAID_US MPI_US BRAID_BUS BRAID_BUS_IN_PLACE MPI_BUS STRIPED_US STRIPED_BUS
STRIPES=(BRAID_SOCKET_NTHREADS=2 BRAID_NSOCKS_PERTHREAD=2)
wires=() bidirs=()
for ((r = 0; r < REPEAT; r++)); do
  wires+=("$(wire_gbs)")
  bidirs+=("$(wire_gbs --bidir)")
  for size in 8 67108864; do
    braid_run "braid.$size.$r" "$size" "${ITERS[$size]}" "${WARMUP[$size]}"
    braid_run "striped.$size.$r" "$size" "${ITERS[$size]}" "${WARMUP[$size]}" "${STRIPES[@]}"
    mpi_run "mpi.$size.$r" "$size" "${ITERS[$size]}" "${WARMUP[$size]}"
  done
done
WIRE=$(median "${wires[@]}")
BIDIR=$(median "${bidirs[@]}")
for size in 8 67108864; do
  BRAID_US[$size]=$(for ((r = 0; r < REPEAT; r++)); do row "$tmp/braid.$size.$r.0" "$size" 6; done | median_in)
  STRIPED_US[$size]=$(for ((r = 0; r < REPEAT; r++)); do row "$tmp/striped.$size.$r.0" "$size" 6; done | median_in)
  STRIPED_BUS[$size]=$(for ((r = 0; r < REPEAT; r++)); do row "$tmp/striped.$size.$r.0" "$size" 8; done | median_in)
  MPI_US[$size]=$(for ((r = 0; r < REPEAT; r++)); do row "$tmp/mpi.$size.$r" "$size" 6; done | median_in)
  BRAID_BUS[$size]=$(for ((r = 0; r < REPEAT; r++)); do row "$tmp/braid.$size.$r.0" "$size" 8; done | median_in)
  BRAID_BUS_IN_PLACE[$size]=$(for ((r = 0; r < REPEAT; r++)); do row "$tmp/braid.$size.$r.0" "$size" 12; done | median_in)
  MPI_BUS[$size]=$(for ((r = 0; r < REPEAT; r++)); do row "$tmp/mpi.$size.$r" "$size" 8; done | median_in)
done

# Gloo and braid_torch in one job across the two namespaces.
port=$(python3 "$BRAID_ROOT/tests/support/free_port.py")
for rank in 0 1; do
  braid_netns_exec "$rank" env RANK=$rank WORLD_SIZE=2 MASTER_ADDR=10.77.0.1 MASTER_PORT=$port \
    LOCAL_RANK=0 BRAID_SOCKET_IFNAME=bveth GLOO_SOCKET_IFNAME=bveth0 PYTHONWARNINGS=ignore \
    PYTHONPATH="$BRAID_BUILD/python" /usr/bin/python3 "$BRAID_ROOT/bench/torch/allreduce_vs_gloo.py" \
    --min-bytes 8 --max-bytes 67108864 >"$tmp/torch.$rank" 2>&1 &
done
wait
gloo_row() { awk -F'|' -v s="$1" '$2 + 0 == s { gsub(/ /, "", $3); gsub(/ /, "", $4); print $3, $4; exit }' "$tmp/torch.0"; }
read -r GLOO8 BT8 < <(gloo_row 8)
read -r GLOO64 BT64 < <(gloo_row 67108864)

encryption_table
echo "2 hosts (network namespaces on $(uname -n), $(nproc) cores), 1 rank each, $(date -u +%F);"
echo "medians of $REPEAT runs. Wire yardstick (iperf3, TCP, host 0 to host 1): $(printf %.2f "$WIRE") GB/s"
echo "one way, $(printf %.2f "$BIDIR") GB/s per direction both ways at once."
echo
echo "| library | 8 B (us) | 64 MiB (us) | 64 MiB busbw (GB/s) | busbw / wire one way | busbw / wire both ways |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for lib in braid striped mpi; do
  if [[ $lib == braid ]]; then t8=${BRAID_US[8]} t64=${BRAID_US[67108864]} bus=${BRAID_BUS[67108864]} name="braid-perf (socket transport)"
  elif [[ $lib == striped ]]; then t8=${STRIPED_US[8]} t64=${STRIPED_US[67108864]} bus=${STRIPED_BUS[67108864]} name="braid-perf (sockets, 2 threads x 2 connections)"
  else t8=${MPI_US[8]} t64=${MPI_US[67108864]} bus=${MPI_BUS[67108864]} name="OpenMPI (TCP BTL)"; fi
  echo "| $name | $t8 | $t64 | $bus | $(python3 -c "print(f'{$bus / $WIRE:.2f}')") | $(python3 -c "print(f'{$bus / $BIDIR:.2f}')") |"
done
for lib in gloo braid_torch; do
  if [[ $lib == gloo ]]; then t8=$GLOO8 t64=$GLOO64 name="torch gloo"; else t8=$BT8 t64=$BT64 name="torch braid_torch"; fi
  bus=$(python3 -c "print(f'{67108864 / ($t64 * 1e-6) / 1e9:.2f}')")  # 2 ranks: busbw = algbw
  echo "| $name | $t8 | $t64 | $bus | $(python3 -c "print(f'{$bus / $WIRE:.2f}')") | $(python3 -c "print(f'{$bus / $BIDIR:.2f}')") |"
done
echo
echo "braid vs the better of OpenMPI and Gloo at 64 MiB: $(python3 -c "print(f'{min(${MPI_US[67108864]}, $GLOO64) / ${BRAID_US[67108864]}:.2f}x')")"
echo "(striped: $(python3 -c "print(f'{min(${MPI_US[67108864]}, $GLOO64) / ${STRIPED_US[67108864]}:.2f}x')"));"
echo "8 B, braid vs OpenMPI: $(python3 -c "print(f'{${MPI_US[8]} / ${BRAID_US[8]}:.2f}x')") (above 1: braid faster)."
echo
echo "iperf3 yardstick: braid 64 MiB busbw / iperf3 per direction both ways = $(python3 -c "print(f'{${BRAID_BUS[67108864]} / $BIDIR:.2f}')")"\
  "out of place, $(python3 -c "print(f'{${BRAID_BUS_IN_PLACE[67108864]} / $BIDIR:.2f}')") in place" \
  "(striped: $(python3 -c "print(f'{${STRIPED_BUS[67108864]} / $BIDIR:.2f}')")), at 8 B ${BRAID_US[8]} us" \
  "(striped: ${STRIPED_US[8]} us)."
