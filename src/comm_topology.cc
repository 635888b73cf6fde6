// The topology a communicator runs on: the machine (discovered with hwloc,
// or loaded from BRAID_TOPO_FILE), where each rank sits on it, and the
// transports, rings and trees the search derives (topology/plan.h).
//
// Discovery looks at the whole machine, so a process does it once and
// every communicator it makes reuses the result. All ranks share one host
// today (network transports are later work), so each rank plans from its
// own view of it and all reach the same plan. What differs between ranks is
// where each runs: a rank pinned to one socket's cores says so in its
// PeerInfo (numaId), and the plan places it on that socket's CPU node.
#include <mutex>
#include <string>

#include "comm_impl.h"
#include "topology/cpu_affinity.h"
#include "topology/plan.h"
#include "topology/summary.h"
#include "topology/topology_file.h"
#include "util/log.h"

namespace braid {
namespace {

// This process's discovery, made by the first communicator that needs it.
Result<topology::Graph> discoveredOnce() {
  static std::once_flag once;
  static Result<topology::Graph> graph = internalError("topology not discovered");
  std::call_once(once, [] { graph = topology::obtainTopology("", ""); });
  return graph;
}

}  // namespace

Status Comm::Impl::loadTopology() {
  // A file the user names must load; discovery that fails only costs the
  // ring order, which then stays 0, 1, ..., N-1.
  Result<topology::Graph> graph =
      config.topoFile.empty() && config.topoDumpFile.empty()
          ? discoveredOnce()
          : topology::obtainTopology(config.topoFile, config.topoDumpFile);
  if (!graph.ok()) {
    if (!config.topoFile.empty()) return graph.status().withContext("BRAID_TOPO_FILE");
    BRAID_WARN("topology discovery failed (%s); using the ring 0..%d",
               graph.status().message().c_str(), nranks - 1);
    return Status::success();
  }
  machine = std::move(graph).value();
  return Status::success();
}

int32_t Comm::Impl::numaIdOfThisRank() const {
  if (!machine) return -1;
  return topology::numaOfCpus(*machine, 0, topology::allowedCpus());
}

Status Comm::Impl::planTopology() {
  ring.resize(nranks);
  for (int r = 0; r < nranks; ++r) ring[r] = r;
  if (!machine) return Status::success();
  const topology::Graph& graph = *machine;

  topology::PlanOptions options;
  if (!config.p2pLevel.empty()) {
    BRAID_ASSIGN_OR_RETURN(options.transports.p2pLevel, topology::parsePathType(config.p2pLevel));
  }
  if (!config.transports.empty()) {
    BRAID_ASSIGN_OR_RETURN(options.transports.allowed,
                           topology::TransportSet::parse(config.transports));
  }
  // Host-memory ranks on one host, each on the CPU node it is pinned to.
  std::vector<topology::RankLocation> where(nranks);
  for (int r = 0; r < nranks; ++r) where[r].numaId = peers[r].numaId;
  BRAID_ASSIGN_OR_RETURN(topology::Placement placement, topology::placeRanks(graph, where));
  BRAID_ASSIGN_OR_RETURN(topology::TopologyPlan plan,
                         topology::planTopology(graph, topology::Paths(graph), placement, options));
  if (rank == 0) BRAID_INFO("%s", topology::summarizeTopology(graph, plan).c_str());
  if (!plan.rings.channels.empty() &&
      plan.rings.channels[0].order.size() == static_cast<size_t>(nranks)) {
    ring = plan.rings.channels[0].order;
  }
  return Status::success();
}

}  // namespace braid
