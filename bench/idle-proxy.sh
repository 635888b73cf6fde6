#!/usr/bin/env bash
# What the first collective after an idle spell pays for the verbs proxy's sleep: 8 B all_reduce
# between two namespace hosts (scripts/lib/netns.sh), one rank each, over the emulated HCA
# (BRAID_IB_EMULATE=1, BRAID_NET=IB), timed back to back and each call alone after IDLE_MS of
# nothing (braid-perf --idle_ms: the ranks sleep, meet over the bootstrap, then time one call).
# The proxy sleeps kIdlePauseUs between polls after 200 ms idle (transport/net/ib/ib_proxy.h);
# a call rings its doorbell as it starts (net::Doorbell), so the ratio of the two times is what
# the idle spell still costs. Prints one Markdown row: back to back, after idle, the ratio, each
# the median of REPEAT runs. Root only.
#
# usage: bench/idle-proxy.sh      env: REPEAT (default 3), IDLE_MS (default 300), ITERS (20)
set -euo pipefail
source "$(dirname "$0")/../scripts/lib/common.sh"
source "$BRAID_ROOT/scripts/lib/netns.sh"
source "$(dirname "$0")/lib.sh"
REPEAT="${REPEAT:-3}"
IDLE_MS="${IDLE_MS:-300}"
ITERS="${ITERS:-20}"
[[ $(id -u) -eq 0 ]] || { echo "idle-proxy: needs root (network namespaces)"; exit 1; }

braid_install_deps
braid_build braid-perf >/dev/null
tmp="$(mktemp -d)"
trap 'braid_netns_cleanup; rm -rf "$tmp"' EXIT
braid_netns_hosts "i$$" 2

# run OUT [braid-perf options...]: one 8 B all_reduce run on both hosts; rank 0's time (us).
run() {
  local out=$1 port rank
  shift
  port=$(python3 "$BRAID_ROOT/tests/support/free_port.py")
  for rank in 0 1; do
    braid_netns_exec "$rank" env BRAID_IB_EMULATE=1 BRAID_NET=IB RANK=$rank WORLD_SIZE=2 \
      MASTER_ADDR=10.77.0.1 MASTER_PORT=$port BRAID_SOCKET_IFNAME=bveth \
      "$BRAID_BUILD/bin/braid-perf" all_reduce -b 8 -e 8 -w 20 -c 0 "$@" >"$out.$rank" 2>&1 &
  done
  wait
  time_of "$out.0" 8
}

warm=() idle=()
for ((i = 0; i < REPEAT; i++)); do
  warm+=("$(run "$tmp/warm$i" -n 1000)")
  idle+=("$(run "$tmp/idle$i" -n "$ITERS" --idle_ms "$IDLE_MS")")
done
w=$(median "${warm[@]}")
a=$(median "${idle[@]}")
echo "| back to back (us) | after ${IDLE_MS} ms idle (us) | ratio |"
echo "| --- | --- | --- |"
awk -v w="$w" -v a="$a" 'BEGIN { printf "| %.1f | %.1f | %.2f |\n", w, a, a / w }'
