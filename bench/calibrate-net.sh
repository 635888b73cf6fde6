#!/usr/bin/env bash
# The cost model's network figures (Model::interHost, src/tune/cost_model.h), measured: braid's
# ring all_reduce between two hosts, one rank each, with Simple (the one protocol braid runs
# between hosts; LL's entry only stands in). The hosts are network
# namespaces of this machine joined by a bridge (scripts/lib/netns.sh), so what it measures is
# braid's socket transport over a veth pair; run the same braid-perf commands between real hosts
# to measure a real network.
#
# With 2 ranks on 2 hosts the ring's both hops cross, and the model times an all_reduce of S
# bytes as callUs + 2 L + S / B (cost_model.cc: busBytes = S at N = 2). Two sizes fix L and B:
# the latency from the smallest, the bandwidth from the slope up to the largest. Prints the
# figures as the lines of Model::calibratedDefaults() (src/tune/calibrated_defaults.cc).
#
# usage: bench/calibrate-net.sh     env: REPEAT (runs per figure, median kept; default 3),
#                                        SMALL (default 8), LARGE (bytes, default 16777216)
set -euo pipefail
source "$(dirname "$0")/../scripts/lib/common.sh"
source "$BRAID_ROOT/scripts/lib/netns.sh"
source "$(dirname "$0")/lib.sh"
REPEAT="${REPEAT:-3}"
SMALL="${SMALL:-8}"
LARGE="${LARGE:-16777216}"
[[ $(id -u) -eq 0 ]] || { echo "calibrate-net: needs root (network namespaces)"; exit 1; }
braid_install_deps
braid_build braid-perf >/dev/null
tmp="$(mktemp -d)"
trap 'braid_netns_cleanup; rm -rf "$tmp"' EXIT
braid_netns_hosts "c$$" 2

# us PROTO SIZE ITERS: the mean time of one all_reduce (braid-perf prints it on rank 0).
us() {
  local proto=$1 size=$2 iters=$3
  perf_across_hosts "$tmp/out" "$size" "$iters" $((iters / 10 + 1)) BRAID_ALGO=ring \
    BRAID_PROTO="$proto"
  if ! cat "$tmp/out.0" "$tmp/out.1" |
    awk -v s="$size" '$1 == s { t += $6; n++ } END { if (n == 0) exit 1; print t / n }'; then
    echo "calibrate-net: the $proto run of $size bytes failed:" >&2
    tail -n 5 "$tmp/out.0" "$tmp/out.1" >&2
    return 1
  fi
}

call_us=$(sed -n 's/.*m\.callUs = \([0-9.]*\);.*/\1/p' "$BRAID_ROOT/src/tune/calibrated_defaults.cc")
echo "Ring all_reduce, 2 ranks on 2 namespace hosts, median of $REPEAT runs; callUs = $call_us"
echo
echo "| protocol | $SMALL B (us) | $LARGE B (us) | latency L per crossing (us) | bandwidth B (GB/s) |"
echo "| --- | ---: | ---: | ---: | ---: |"
smalls=() larges=()
for ((rep = 0; rep < REPEAT; ++rep)); do
  smalls+=("$(us simple "$SMALL" 1000)")
  larges+=("$(us simple "$LARGE" 10)")
done
small=$(median "${smalls[@]}")
large=$(median "${larges[@]}")
read -r lat bw < <(awk -v a="$small" -v b="$large" -v sa="$SMALL" -v sb="$LARGE" -v c="$call_us" \
  'BEGIN { l = (a - c) / 2; if (l < 0) l = 0; printf("%.4g %.4g\n", l, (sb - sa) / (b - a) / 1000) }')
echo "| simple | $small | $large | $lat | $bw |"
echo
echo "  m.interHost[kSimple] = {$lat, $bw};  // measured: ring/simple all_reduce N=2 over 2 hosts"
echo "  m.interHost[kLl] = m.interHost[kSimple];  // LL does not run between hosts"
