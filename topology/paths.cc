#include "topology/paths.h"

#include <set>
#include <string>

#include <algorithm>
#include <deque>
#include <limits>
#include <set>
#include <string>

namespace braid::topology {

namespace {

constexpr double kUnbounded = std::numeric_limits<double>::infinity();
constexpr int kNoLink = 4;  // the "arrived by" slot of the source, which arrived by no link

// One way of reaching a node: the metrics of the path so far and where it
// came from (an index into the arena of labels, -1 at the source).
struct Label {
  PathType type = PathType::kLoc;
  double bandwidthGBs = kUnbounded;
  int hops = 0;
  int node = -1;
  int arrivedBy = kNoLink;  ///< the LinkType of the last step, as an int
  int parent = -1;
  bool dominated = false;
};

bool noWorse(const Label& a, const Label& b) {
  return a.type <= b.type && a.bandwidthGBs >= b.bandwidthGBs && a.hops <= b.hops;
}

// Whether a path that arrived at `at` by `arrivedBy` may leave it by `leave`.
bool mayPassThrough(const Node& at, int arrivedBy, LinkType leave) {
  const auto in = static_cast<LinkType>(arrivedBy);
  switch (at.type) {
    case NodeType::kGpu:
      return in == LinkType::kNvLink && leave == LinkType::kNvLink;
    case NodeType::kNic:
      return (in == LinkType::kPci && leave == LinkType::kNet) ||
             (in == LinkType::kNet && leave == LinkType::kPci);
    default:
      return true;
  }
}

PathType stepType(const Graph& graph, int from, const Link& link, bool relayed) {
  const NodeType a = graph.node(from).type;
  const NodeType b = graph.node(link.to).type;
  switch (link.type) {
    case LinkType::kNvLink:
      return relayed && a == NodeType::kGpu ? PathType::kNvb : PathType::kNvl;
    case LinkType::kPci:
      if (a == NodeType::kCpu || b == NodeType::kCpu) return PathType::kPhb;
      if (a == NodeType::kPciSwitch && b == NodeType::kPciSwitch) return PathType::kPxb;
      return PathType::kPix;
    case LinkType::kSys:
      return PathType::kSys;
    case LinkType::kNet:
      return PathType::kNet;
  }
  return PathType::kDis;
}

bool onPath(const std::vector<Label>& arena, int label, int node) {
  for (int at = label; at >= 0; at = arena[at].parent) {
    if (arena[at].node == node) return true;
  }
  return false;
}

}  // namespace

bool betterPath(const Path& a, const Path& b) {
  if (a.type != b.type) return a.type < b.type;
  if (a.bandwidthGBs != b.bandwidthGBs) return a.bandwidthGBs > b.bandwidthGBs;
  return a.hops() < b.hops();
}

// Label correcting search: the path metrics (worst type, bottleneck, hops)
// never improve as a path grows, so a way of reaching a node that another
// one beats on all three can be dropped. What the path may do next depends
// on how it arrived (through a GPU only NVLink to NVLink), so the sets of
// unbeaten labels are kept per (node, link type it arrived by).
std::vector<Path> pathsFrom(const Graph& graph, int source) {
  const int n = graph.size();
  std::vector<Label> arena;
  std::vector<std::vector<int>> frontier(n * 5);  // unbeaten labels per (node, arrivedBy)
  std::deque<int> queue;

  arena.push_back(Label{PathType::kLoc, kUnbounded, 0, source, kNoLink, -1, false});
  frontier[source * 5 + kNoLink].push_back(0);
  queue.push_back(0);
  while (!queue.empty()) {
    const int current = queue.front();
    queue.pop_front();
    if (arena[current].dominated) continue;
    const Label here = arena[current];
    const Node& node = graph.node(here.node);
    const bool relayed = here.node != source;
    for (const Link& link : node.links) {
      if (relayed && !mayPassThrough(node, here.arrivedBy, link.type)) continue;
      if (onPath(arena, current, link.to)) continue;
      Label next;
      next.type = std::max(here.type, stepType(graph, here.node, link, relayed));
      next.bandwidthGBs = std::min(here.bandwidthGBs, link.bandwidthGBs);
      next.hops = here.hops + 1;
      next.node = link.to;
      next.arrivedBy = static_cast<int>(link.type);
      next.parent = current;
      std::vector<int>& slot = frontier[link.to * 5 + next.arrivedBy];
      bool beaten = false;
      for (int other : slot) {
        if (noWorse(arena[other], next)) beaten = true;
      }
      if (beaten) continue;
      for (int other : slot) {
        if (noWorse(next, arena[other])) arena[other].dominated = true;
      }
      slot.erase(std::remove_if(slot.begin(), slot.end(),
                                [&](int other) { return arena[other].dominated; }),
                 slot.end());
      arena.push_back(next);
      slot.push_back(static_cast<int>(arena.size()) - 1);
      queue.push_back(static_cast<int>(arena.size()) - 1);
    }
  }

  std::vector<Path> paths(n);
  for (int to = 0; to < n; ++to) {
    int best = -1;
    Path bestPath;
    for (int arrivedBy = 0; arrivedBy < 5; ++arrivedBy) {
      for (int label : frontier[to * 5 + arrivedBy]) {
        Path candidate;
        candidate.type = arena[label].type;
        candidate.bandwidthGBs = arena[label].bandwidthGBs;
        candidate.nodes.assign(arena[label].hops + 1, -1);
        if (best < 0 || betterPath(candidate, bestPath)) {
          best = label;
          bestPath = std::move(candidate);
        }
      }
    }
    if (best < 0) continue;
    int index = static_cast<int>(bestPath.nodes.size()) - 1;
    for (int at = best; at >= 0; at = arena[at].parent) bestPath.nodes[index--] = arena[at].node;
    paths[to] = std::move(bestPath);
  }
  return paths;
}

Paths::Paths(const Graph& graph) : n_(graph.size()) {
  paths_.reserve(static_cast<size_t>(n_) * n_);
  for (int from = 0; from < n_; ++from) {
    std::vector<Path> row = pathsFrom(graph, from);
    for (Path& path : row) paths_.push_back(std::move(path));
  }
}

std::vector<int> nearestNics(const Graph& graph, const Paths& paths, int device) {
  std::vector<int> best;
  const int host = graph.node(device).host;
  // A host with RDMA ports talks to other hosts through them (the verbs
  // transport runs wherever every rank has one), so its plain interfaces
  // (eth0; ib0 or ens1f0 beside a verbs port, the same adapter again) are
  // not NICs to plan on.
  bool hasRdma = false;
  for (int nic : graph.nodesOfType(NodeType::kNic, host)) hasRdma = hasRdma || graph.node(nic).rdma;
  for (int nic : graph.nodesOfType(NodeType::kNic, host)) {
    const Node& n = graph.node(nic);
    if (hasRdma && !n.rdma) continue;
    const Path& path = paths.between(device, nic);
    if (path.type == PathType::kDis) continue;
    if (best.empty() || betterPath(path, paths.between(device, best.front()))) {
      best.assign(1, nic);
    } else if (!betterPath(paths.between(device, best.front()), path)) {
      best.push_back(nic);
    }
  }
  return best;
}

}  // namespace braid::topology
