// Topology discovery: the Graph of this host, found live, or read from the
// XML hwloc writes (`lstopo --of xml`) for any host.
//
// Both go through hwloc and the same conversion (hwloc_graph.h). The live
// path adds what hwloc does not know: CUDA device indices, RDMA port speeds
// from libibverbs, interface speeds from sysfs, NVLink from NVML. Every one
// of those may be missing; discovery then says so at INFO and carries on,
// so a machine without a GPU, rdma-core or NVML still gets a valid graph.
// How each part maps is in docs/topology-discovery.md.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "braid/status.h"
#include "topology/graph.h"
#include "topology/verbs_nics.h"

namespace braid::topology {

/// The topology of the host this process runs on, as host 0. Fails only
/// when hwloc itself cannot load this machine's topology.
Result<Graph> discoverTopology();

/// The topology in `xmlText`, an hwloc XML document (hwloc 1.x or 2.x, as
/// `lstopo --of xml` writes it), as host 0. GPUs and NICs are recognised by
/// PCI class and vendor and by their OS devices; nothing of the running
/// machine is consulted. Malformed or non-hwloc XML is an invalid argument.
Result<Graph> parseHwlocXml(const std::string& xmlText);

/// Adds each of `ports` that host 0 of `graph` lacks as an RDMA NIC on the CPU of its NUMA node
/// (the first CPU when unknown), over a PCIe link of unknown speed, as discovery places a port
/// hwloc did not see. For the emulated HCA's ports (BRAID_IB_EMULATE), which no hwloc or sysfs
/// lists, so that the search plans channels and rails on them as on real NICs. Returns how many
/// it added; none on a graph without a CPU.
int attachVerbsPorts(Graph& graph, const std::vector<VerbsPort>& ports);

/// The same for plain network interfaces ("bveth1"): those the socket transport spreads its
/// channels over (BRAID_SOCKET_IFNAME) that the graph lacks, virtual ones included (a veth,
/// which discovery does not count as a NIC), on host 0's first CPU.
int attachInterfaces(Graph& graph, const std::vector<std::string>& names);

/// Takes the RDMA ports of `host` that `allowed` refuses (given the device, "mlx5_2", and the
/// port number) out of planning: each becomes a plain interface, which no plan uses while the
/// host has RDMA ports left (paths.h nearestNics). For BRAID_IB_HCA: a storage NIC it leaves out
/// is not opened by the verbs transport, so no ring, tree or point-to-point route may use it.
/// Returns the names of those it took out.
std::vector<std::string> leaveOutRdmaPorts(
    Graph& graph, int host, const std::function<bool(const std::string&, int)>& allowed);

}  // namespace braid::topology
