# Hosts as network namespaces on one machine, for the multi-host tests (tests/e2e/lib.sh) and
# benchmarks (bench/compare-net.sh). Sourced, not run; needs root and iproute2.
#
# braid_netns_hosts TAG HOSTS: HOSTS namespaces braid-TAG-h<i>, each a host with interface
# bveth0 at 10.77.0.<i+1>/24 (with BRAID_NETNS_IPV6=1: at fd77::<i+1>/64 only, no IPv4), joined
# by a bridge in namespace braid-TAG-sw (the switch). With BRAID_NETNS_RAILS=R (IPv4 only),
# each host also has bveth1 .. bveth<R-1>, rail r at 10.<77+r>.0.<i+1>/24 on a bridge of its
# own, as a cluster with a switch per rail. The
# addresses exist only inside the namespaces. Appends every namespace it makes to BRAID_NETNS
# (for braid_netns_cleanup) and the hosts', in order, to BRAID_NETNS_HOSTS. Returns 1 when the
# kernel refuses a namespace.

# shellcheck shell=bash

BRAID_NETNS=()
BRAID_NETNS_HOSTS=()

braid_netns_hosts() {
  local tag=$1 hosts=$2 i ns sw="braid-$1-sw"
  ip netns add "$sw" 2>/dev/null || return 1
  BRAID_NETNS+=("$sw")
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up
  for ((i = 0; i < hosts; i++)); do
    ns="braid-$tag-h$i"
    ip netns add "$ns"
    BRAID_NETNS+=("$ns")
    BRAID_NETNS_HOSTS+=("$ns")
    ip link add "bv$tag$i" type veth peer name "bs$tag$i"
    ip link set "bv$tag$i" netns "$ns" name bveth0
    ip link set "bs$tag$i" netns "$sw"
    ip -n "$sw" link set "bs$tag$i" master br0 up
    if [[ -n ${BRAID_NETNS_IPV6:-} ]]; then
      ip -n "$ns" addr add "fd77::$((i + 1))/64" dev bveth0 nodad
    else
      ip -n "$ns" addr add "10.77.0.$((i + 1))/24" dev bveth0
    fi
    ip -n "$ns" link set bveth0 up
    ip -n "$ns" link set lo up
  done
  local rail
  for ((rail = 1; rail < ${BRAID_NETNS_RAILS:-1}; rail++)); do
    ip -n "$sw" link add "br$rail" type bridge
    ip -n "$sw" link set "br$rail" up
    for ((i = 0; i < hosts; i++)); do
      ns="braid-$tag-h$i"
      ip link add "bv$tag${i}r$rail" type veth peer name "bs$tag${i}r$rail"
      ip link set "bv$tag${i}r$rail" netns "$ns" name "bveth$rail"
      ip link set "bs$tag${i}r$rail" netns "$sw"
      ip -n "$sw" link set "bs$tag${i}r$rail" master "br$rail" up
      ip -n "$ns" addr add "10.$((77 + rail)).0.$((i + 1))/24" dev "bveth$rail"
      ip -n "$ns" link set "bveth$rail" up
    done
  done
  # A bridge without STP forwards as soon as its ports are up; braid's connects retry anyway.
}

# braid_netns_addr HOST: host HOST's address (IPv4 or, with BRAID_NETNS_IPV6=1, IPv6).
braid_netns_addr() {
  if [[ -n ${BRAID_NETNS_IPV6:-} ]]; then echo "fd77::$(($1 + 1))"; else echo "10.77.0.$(($1 + 1))"; fi
}

# braid_netns_exec HOST CMD...: runs CMD in host HOST's namespace with a host name of its own
# (braid-host<HOST>, in a UTS namespace of its own), as a process of another machine would run.
braid_netns_exec() {
  local host=$1
  shift
  ip netns exec "${BRAID_NETNS_HOSTS[$host]}" unshare --uts sh -c 'hostname "$0" && exec "$@"' \
    "braid-host$host" "$@"
}

# braid_netns_rsh_agent FILE: writes to FILE an rsh agent for mpirun (--mca plm_rsh_agent FILE)
# that starts its command on host 10.77.0.<i+1> in namespace i, as braid_netns_exec would,
# instead of through ssh. mpirun itself runs in host 0's namespace.
braid_netns_rsh_agent() {
  local file=$1 prefix=${BRAID_NETNS_HOSTS[0]%0}
  cat >"$file" <<AGENT
#!/usr/bin/env bash
# mpirun's rsh agent: host 10.77.0.<i+1> is namespace ${prefix}<i>.
while [[ \$1 == -* ]]; do shift; done
host=\$1
shift
i=\$((\${host##*.} - 1))
exec ip netns exec "${prefix}\$i" unshare --uts sh -c "hostname braid-host\$i; \$*"
AGENT
  chmod +x "$file"
}

# braid_netns_cleanup: kills what runs in the namespaces made here and deletes them.
braid_netns_cleanup() {
  local ns
  for ns in "${BRAID_NETNS[@]}"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  BRAID_NETNS=()
  BRAID_NETNS_HOSTS=()
}
