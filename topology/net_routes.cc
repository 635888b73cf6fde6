// Point-to-point routes between hosts: see net_routes.h.
#include "topology/net_routes.h"

#include <algorithm>

namespace braid::topology {
namespace {

// The rank placed on `device`, the first of them; -1 where none is.
int rankOn(const Placement& placement, int device) {
  for (size_t r = 0; r < placement.size(); ++r) {
    if (placement[r].device == device) return static_cast<int>(r);
  }
  return -1;
}

// The GPU of `host` nearest `nic` (NCCL's "local GPU" of a NIC): the best path, ties to the
// first in CUDA order; -1 where the host has no GPU that reaches it.
int gpuNearest(const Graph& graph, const Paths& paths, int host, int nic) {
  int best = -1;
  for (int gpu : gpusInCudaOrder(graph, host)) {
    const Path& path = paths.between(gpu, nic);
    if (path.type == PathType::kDis) continue;
    if (best < 0 || betterPath(path, paths.between(best, nic))) best = gpu;
  }
  return best;
}

// The rank of `from`'s host on the GPU whose index there is the index of `to`'s GPU on its
// host; -1 where either rank has no GPU or `from`'s host has no GPU of that index or no rank on it.
int sameIndexRank(const Graph& graph, const Placement& placement, int from, int to) {
  const RankPlace& peer = placement[to];
  if (graph.node(peer.device).type != NodeType::kGpu) return -1;
  if (graph.node(placement[from].device).type != NodeType::kGpu) return -1;
  const std::vector<int> theirs = gpusInCudaOrder(graph, peer.host);
  const auto at = std::find(theirs.begin(), theirs.end(), peer.device);
  const std::vector<int> ours = gpusInCudaOrder(graph, placement[from].host);
  const size_t index = static_cast<size_t>(at - theirs.begin());
  if (at == theirs.end() || index >= ours.size()) return -1;
  return rankOn(placement, ours[index]);
}

}  // namespace

P2pNetRoute p2pSendRoute(const Graph& graph, const Paths& paths, const Placement& placement,
                         const std::vector<int>& rankNics, int from, int to,
                         const P2pNetOptions& options) {
  P2pNetRoute route;
  route.nic = rankNics[from];
  if (options.crossNic != 0 && options.pxnLevel == 0) return route;
  const int railRank = sameIndexRank(graph, placement, from, to);
  if (railRank < 0 || rankNics[railRank] < 0 || rankNics[railRank] == route.nic) return route;
  const int railNic = rankNics[railRank];
  if (options.crossNic == 0) {
    route.nic = railNic;
    route.railOfPeer = true;
  }
  if (options.pxnLevel == 0) return route;
  const int self = placement[from].device;
  const int relayGpu = gpuNearest(graph, paths, placement[from].host, railNic);
  if (relayGpu < 0 || relayGpu == self) return route;
  const bool relayWorks = paths.type(self, relayGpu) <= PathType::kNvl &&
                          paths.type(relayGpu, railNic) <= PathType::kPxb;
  const bool needed = paths.type(self, railNic) > PathType::kPxb;
  const int relayRank = rankOn(placement, relayGpu);
  if (!relayWorks || relayRank < 0 || (options.pxnLevel == 1 && !needed)) return route;
  route.nic = railNic;
  route.relayRank = relayRank;
  route.railOfPeer = true;
  return route;
}

std::string describeRoute(const P2pNetRoute& route) {
  if (route.nic < 0) return "";
  if (!route.railOfPeer) return "(nearest)";
  if (route.relayRank < 0) return "(the peer's rail)";
  return "(the peer's rail; PXN relay: rank " + std::to_string(route.relayRank) + ")";
}

}  // namespace braid::topology
