#include "topology/plan.h"

namespace braid::topology {

Result<TopologyPlan> planTopology(const Graph& graph, const Paths& paths,
                                  const Placement& placement, const PlanOptions& options) {
  TopologyPlan plan;
  plan.placement = placement;
  BRAID_ASSIGN_OR_RETURN(plan.transports,
                         chooseTransports(graph, paths, placement, options.transports));
  BRAID_ASSIGN_OR_RETURN(plan.rings, searchRings(graph, paths, placement, options.search));
  BRAID_ASSIGN_OR_RETURN(plan.trees, searchTrees(graph, paths, placement, options.search));
  plan.rankNics = assignNics(graph, paths, placement);
  plan.p2p = options.p2p;
  return plan;
}

}  // namespace braid::topology
