// Everything the topology decides for a communicator, in one call: from the
// graph and where the ranks run, the transport of each pair, the rings and
// the trees. Pure: the caller reads the environment into PlanOptions.
#pragma once

#include "topology/graph.h"
#include "topology/net_routes.h"
#include "topology/paths.h"
#include "topology/placement.h"
#include "topology/search.h"
#include "topology/transport_choice.h"

namespace braid::topology {

struct PlanOptions {
  TransportPolicy transports;  ///< BRAID_P2P_LEVEL, BRAID_TRANSPORTS
  SearchOptions search;        ///< channel limits
  P2pNetOptions p2p;           ///< NCCL_CROSS_NIC, PXN: point-to-point routes (net_routes.h)
};

struct TopologyPlan {
  Placement placement;
  TransportMatrix transports;  ///< [a][b]
  RingPlan rings;
  TreePlan trees;
  std::vector<int> rankNics;  ///< each rank's own NIC (assignNics), by rank; -1: none
  P2pNetOptions p2p;          ///< how point-to-point routes are chosen (p2pSendRoute)
};

/// The plan for ranks placed as `placement` on `graph` (whose paths are
/// `paths`).
Result<TopologyPlan> planTopology(const Graph& graph, const Paths& paths,
                                  const Placement& placement, const PlanOptions& options);

}  // namespace braid::topology
