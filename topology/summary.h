// The topology in words: what braid-topo prints, and the paragraph a
// communicator logs at INFO when it starts.
#pragma once

#include <string>

#include "topology/graph.h"
#include "topology/paths.h"
#include "topology/plan.h"

namespace braid::topology {

/// "450", "56.25", "local" (infinite): a bandwidth in GB/s for people.
std::string formatBandwidth(double gbs);

/// The machine as an indented tree, host by host: CPUs, the PCIe switches
/// under them, GPUs and NICs, each with the bandwidth of its link up; then
/// the links that are not PCIe tree edges (NVLink, the socket link), and
/// the network.
std::string describeMachine(const Graph& graph);

/// Path type matrices with their bottleneck bandwidths: GPU x GPU,
/// GPU x NIC, CPU x NIC, and CPU x CPU.
std::string describePaths(const Graph& graph, const Paths& paths);

/// Where the ranks run, the transport of every pair, the rings (one line
/// per channel, with the NICs each uses between hosts) and the trees.
std::string describePlan(const Graph& graph, const Paths& paths, const TopologyPlan& plan);

/// One paragraph: hosts, devices, transports, rings and trees.
std::string summarizeTopology(const Graph& graph, const TopologyPlan& plan);

}  // namespace braid::topology
