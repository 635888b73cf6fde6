# Shared by the bench/ scripts (sourced, not run).
# shellcheck shell=bash

# median V...: the middle value (the lower middle of an even count); median_in: of the lines read.
median_in() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
median() { printf '%s\n' "$@" | median_in; }

# off_by FACTOR A B: whether A and B (positive) are FACTOR times apart or more, either way.
off_by() {
  awk -v f="$1" -v a="$2" -v b="$3" 'BEGIN { exit !(a > 0 && b > 0 && (a >= f * b || b >= f * a)) }'
}

# time_of FILE SIZE: the out-of-place time (us) of row SIZE of a braid-perf table.
time_of() { awk -v s="$2" '$1 == s { print $6; exit }' "$1"; }

# perf_across_hosts OUT SIZE ITERS WARMUP [VAR=VALUE...]: braid-perf all_reduce of SIZE bytes
# between the two namespace hosts of scripts/lib/netns.sh (braid_netns_hosts ... 2), one rank
# each, over the bridge's veth, with the environment given; rank r's table goes to OUT.r.
# PERF_EXTRA_ARGS (an array, empty where unset): more braid-perf flags (--psk_file FILE).
perf_across_hosts() {
  local out=$1 size=$2 iters=$3 warmup=$4 port rank
  shift 4
  port=$(python3 "$BRAID_ROOT/tests/support/free_port.py")
  for rank in 0 1; do
    braid_netns_exec "$rank" env "$@" RANK=$rank WORLD_SIZE=2 MASTER_ADDR=10.77.0.1 \
      MASTER_PORT=$port BRAID_SOCKET_IFNAME=bveth "$BRAID_BUILD/bin/braid-perf" all_reduce \
      -b "$size" -e "$size" -n "$iters" -w "$warmup" -c 0 ${PERF_EXTRA_ARGS[@]+"${PERF_EXTRA_ARGS[@]}"} \
      >"$out.$rank" 2>&1 &
  done
  wait
}
