// Paths between the nodes of a graph, and their NCCL path types.
//
// A path's type is the worst kind of step it takes, in NCCL's order
// (graph.h: LOC < NVL < NVB < PIX < PXB < PHB < SYS < NET):
//   - an NVLink step is NVL, or NVB when it leaves a GPU the path passes
//     through (GPU-to-GPU NVLink relayed by a third GPU);
//   - a PCIe step is PIX, PXB when it joins two PCI switches (the path
//     crosses more than one switch), PHB when it touches a CPU (the host
//     bridge);
//   - a step over the link between CPUs is SYS, over the network NET.
// Its bandwidth is the smallest bandwidth of its links (the bottleneck).
//
// Paths only go where data can: through a GPU only from NVLink to NVLink,
// through a NIC only between its PCIe side and the network. Of all such
// paths from a to b, the best is the one of the lowest type, then of the
// highest bandwidth, then of the fewest hops, and ties go to the one found
// first, so the result is deterministic.
#pragma once

#include <vector>

#include "topology/graph.h"

namespace braid::topology {

struct Path {
  PathType type = PathType::kDis;
  double bandwidthGBs = 0;  ///< the bottleneck; infinite for LOC
  std::vector<int> nodes;   ///< from the source to the destination, both included; empty if DIS

  int hops() const { return nodes.empty() ? 0 : static_cast<int>(nodes.size()) - 1; }
};

/// Whether path a is better than path b: lower type, then more bandwidth,
/// then fewer hops.
bool betterPath(const Path& a, const Path& b);

/// The best path from `source` to every node of the graph (indexed by node).
std::vector<Path> pathsFrom(const Graph& graph, int source);

/// The best path between every pair of nodes.
class Paths {
 public:
  Paths() = default;
  explicit Paths(const Graph& graph);

  const Path& between(int from, int to) const { return paths_[from * n_ + to]; }
  PathType type(int from, int to) const { return between(from, to).type; }
  double bandwidthGBs(int from, int to) const { return between(from, to).bandwidthGBs; }
  int size() const { return n_; }

 private:
  int n_ = 0;
  std::vector<Path> paths_;  ///< n_ x n_, row = source
};

/// The NICs on the host of `device` whose path from it is best (several
/// when they tie), in node order; empty when the host has no reachable NIC.
/// On a host with RDMA ports only they count: plain interfaces (the same
/// adapter's ib0 beside its verbs port, or another Ethernet card) are left
/// out, as the verbs transport carries the traffic there.
std::vector<int> nearestNics(const Graph& graph, const Paths& paths, int device);

}  // namespace braid::topology
