#include "topology/search.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <map>

#include "topology/order_search.h"

namespace braid::topology {

namespace {

// A channel that would move less than this is not worth its resources.
constexpr double kNegligibleGBs = 1e-6;

Status checkPlacement(const Graph& graph, const Placement& placement) {
  if (placement.empty()) return invalidArgument("no ranks to place");
  for (size_t rank = 0; rank < placement.size(); ++rank) {
    const RankPlace& place = placement[rank];
    if (place.device < 0 || place.device >= graph.size() ||
        graph.node(place.device).host != place.host) {
      return invalidArgument("rank " + std::to_string(rank) + " is placed on node " +
                             std::to_string(place.device) + ", not a device of host " +
                             std::to_string(place.host));
    }
  }
  return Status::success();
}

// The ranks of each host that has any, hosts in order, ranks in the order
// of the machine.
std::vector<std::vector<int>> ranksByHost(const Graph& graph, const Placement& placement) {
  std::map<int, std::vector<int>> byHost;
  for (int rank : localityOrder(graph, placement)) byHost[placement[rank].host].push_back(rank);
  std::vector<std::vector<int>> groups;
  for (auto& [host, ranks] : byHost) groups.push_back(std::move(ranks));
  return groups;
}

// Takes a channel's traffic off the links it crosses.
Status consume(StepModel& model, const std::vector<int>& order, double bandwidthGBs,
               std::vector<double>* residual, bool* crossesLinks) {
  BRAID_ASSIGN_OR_RETURN(const std::vector<int> uses, model.linkUses(order, /*cycle=*/true));
  *crossesLinks = false;
  for (size_t link = 0; link < uses.size(); ++link) {
    if (uses[link] == 0) continue;
    *crossesLinks = true;
    (*residual)[link] = std::max(0.0, (*residual)[link] - bandwidthGBs * uses[link]);
  }
  return Status::success();
}

// Which rank of a host's n (in the order of the machine) channel c enters
// by: the even ones first, so that the first channels use every NIC. It
// leaves by the rank before that one, so that the chain between them can
// visit the host in the order of the machine.
int entryIndex(int channel, int n) {
  const int evens = (n + 1) / 2;
  const int i = channel % n;
  return i < evens ? 2 * i : 2 * (i - evens) + 1;
}

// The rails of one host: every NIC nearest some rank of it (paths.h
// nearestNics), in the order of the machine; rail k of the host is its k-th,
// and `near[k]` the indices in `ranks` of the ranks nearest it.
struct HostRails {
  std::vector<int> nics;
  std::vector<std::vector<int>> near;
};

HostRails hostRails(const Graph& graph, const Paths& paths, const Placement& placement,
                    const std::vector<int>& ranks) {
  HostRails rails;
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (int nic : nearestNics(graph, paths, placement[ranks[i]].device)) {
      auto at = std::find(rails.nics.begin(), rails.nics.end(), nic);
      if (at == rails.nics.end()) {
        rails.nics.push_back(nic);
        rails.near.emplace_back();
        at = rails.nics.end() - 1;
      }
      rails.near[at - rails.nics.begin()].push_back(static_cast<int>(i));
    }
  }
  return rails;
}

// Where channel `channel` enters and leaves a host with `ranks` (in the order
// of the machine), and the NIC it uses there (-1: each rank its own).
struct HostPassage {
  int entryIndex;
  int exitIndex;
  int nic;
};

HostPassage passageOf(int channel, int railCount, const std::vector<int>& ranks,
                      const HostRails& rails) {
  const int n = static_cast<int>(ranks.size());
  if (railCount == 0 || rails.nics.empty()) {
    const int entry = entryIndex(channel, n);
    return {entry, (entry + n - 1) % n, -1};
  }
  const size_t rail = static_cast<size_t>(channel % railCount) % rails.nics.size();
  // Among the ranks nearest the rail's NIC, the next one each time the rail comes round; it
  // leaves by another rank near the NIC where there is one (its traffic to the NIC then stays
  // near it too), else by the rank before the entry, as the chain follows the machine.
  const std::vector<int>& near = rails.near[rail];
  const size_t turn = static_cast<size_t>(channel / railCount);
  const int entry = near[turn % near.size()];
  const int exit = near.size() > 1 ? near[(turn + 1) % near.size()] : (entry + n - 1) % n;
  return {entry, exit, rails.nics[rail]};
}

// The parent of position p in the in-order binary tree over positions
// 0..n-1 in which a position's height is its lowest set bit: odd positions
// are the leaves, and 0 is the root, whose one child is the largest power
// of two below n. A position whose natural parent (p plus its lowest bit)
// is past the end hangs from p minus it instead, a level further up.
int inOrderParent(int p, int n) {
  if (p == 0) return -1;
  const int low = p & -p;
  if ((p & (low << 1)) == 0 && p + low < n) return p + low;
  return p - low;
}

// The parent host of each of `count` hosts in tree 0 or 1 of the double
// tree. Tree 1 moves every host to a position of the other parity (shifted
// by one when the count is odd, mirrored when it is even), so that a host
// that is a leaf in one tree is inside the other.
}  // namespace

std::vector<int> hostTreeParents(int count, int tree) {
  auto position = [&](int host) {
    if (tree == 0) return host;
    return count % 2 == 1 ? (host - 1 + count) % count : count - 1 - host;
  };
  std::vector<int> hostAt(count);
  for (int host = 0; host < count; ++host) hostAt[position(host)] = host;
  std::vector<int> parents(count, -1);
  for (int host = 0; host < count; ++host) {
    const int up = inOrderParent(position(host), count);
    parents[host] = up < 0 ? -1 : hostAt[up];
  }
  return parents;
}

namespace {

Result<double> stepBandwidth(StepModel& model, int from, int to,
                             const std::vector<double>& capacity) {
  BRAID_ASSIGN_OR_RETURN(const OrderQuality quality,
                         model.evaluate({from, to}, /*cycle=*/false, capacity));
  return quality.bandwidthGBs;
}

}  // namespace

double RingPlan::totalGBs() const {
  double total = 0;
  for (const Ring& ring : channels) total += ring.bandwidthGBs;
  return total;
}

std::vector<int> localityOrder(const Graph& graph, const Placement& placement) {
  std::vector<long> position(graph.size(), LONG_MAX);
  long next = 0;
  for (int host = 0; host < graph.hostCount(); ++host) {
    std::vector<int> cpus = graph.nodesOfType(NodeType::kCpu, host);
    std::stable_sort(cpus.begin(), cpus.end(),
                     [&](int a, int b) { return graph.node(a).numaId < graph.node(b).numaId; });
    // Depth first down the PCIe tree of each CPU, children in node order.
    for (int cpu : cpus) {
      std::vector<int> stack{cpu};
      while (!stack.empty()) {
        const int at = stack.back();
        stack.pop_back();
        if (position[at] != LONG_MAX) continue;
        position[at] = next++;
        const std::vector<Link>& links = graph.node(at).links;
        for (auto link = links.rbegin(); link != links.rend(); ++link) {
          const NodeType type = graph.node(link->to).type;
          if (link->type == LinkType::kPci && type != NodeType::kCpu &&
              position[link->to] == LONG_MAX) {
            stack.push_back(link->to);
          }
        }
      }
    }
    for (int node = 0; node < graph.size(); ++node) {
      if (graph.node(node).host == host && position[node] == LONG_MAX) position[node] = next++;
    }
  }
  std::vector<int> ranks(placement.size());
  for (size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<int>(r);
  std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
    if (placement[a].host != placement[b].host) return placement[a].host < placement[b].host;
    return position[placement[a].device] < position[placement[b].device];
  });
  return ranks;
}

std::vector<int> assignNics(const Graph& graph, const Paths& paths, const Placement& placement) {
  std::vector<int> nic(placement.size(), -1);
  std::map<int, int> load;
  for (int rank : localityOrder(graph, placement)) {
    for (int candidate : nearestNics(graph, paths, placement[rank].device)) {
      if (nic[rank] < 0 || load[candidate] < load[nic[rank]]) nic[rank] = candidate;
    }
    if (nic[rank] >= 0) ++load[nic[rank]];
  }
  return nic;
}

int stepsAtLeast(const Paths& paths, const Placement& placement, const std::vector<int>& order,
                 PathType type) {
  int count = 0;
  const size_t m = order.size();
  for (size_t i = 0; m > 1 && i < m; ++i) {
    const RankPlace& a = placement[order[i]];
    const RankPlace& b = placement[order[(i + 1) % m]];
    const PathType step = a.host != b.host ? PathType::kNet : paths.type(a.device, b.device);
    if (step >= type) ++count;
  }
  return count;
}

namespace {

// The rings, each channel on a rail (`onRails`) or through each rank's nearest NIC.
Result<RingPlan> searchRingsOf(const Graph& graph, const Paths& paths, const Placement& placement,
                               const SearchOptions& options, bool onRails) {
  const std::vector<std::vector<int>> hosts = ranksByHost(graph, placement);
  const std::vector<int> rankNic = assignNics(graph, paths, placement);
  StepModel model(graph, paths, placement, rankNic);
  std::vector<double> residual = model.capacity();
  std::vector<HostRails> rails;  // by host
  int railCount = 0;
  if (onRails) {
    for (const std::vector<int>& ranks : hosts) {
      rails.push_back(hostRails(graph, paths, placement, ranks));
      railCount = std::max(railCount, static_cast<int>(rails.back().nics.size()));
    }
  }
  RingPlan plan;
  for (int channel = 0; channel < std::max(1, options.maxChannels); ++channel) {
    Ring ring;
    if (hosts.size() == 1) {
      BRAID_ASSIGN_OR_RETURN(ring.order, bestOrder(model, hosts[0], hosts[0][0], -1,
                                                   OrderShape::kCycle, residual, options.budget));
    } else {
      std::vector<int> hostNic(placement.size(), -1);  // the rail's NIC, by rank
      for (size_t h = 0; h < hosts.size(); ++h) {
        const std::vector<int>& ranks = hosts[h];
        const int n = static_cast<int>(ranks.size());
        const HostPassage passage =
            passageOf(channel, railCount, ranks, railCount > 0 ? rails[h] : HostRails{});
        const int entry = ranks[passage.entryIndex];
        const int exit = ranks[passage.exitIndex];
        hostNic[entry] = hostNic[exit] = passage.nic;
        std::vector<int> chain{entry};
        if (n > 1) {
          BRAID_ASSIGN_OR_RETURN(chain, bestOrder(model, ranks, entry, exit, OrderShape::kPathToEnd,
                                                  residual, options.budget));
        }
        ring.order.insert(ring.order.end(), chain.begin(), chain.end());
      }
      for (size_t i = 0; i < ring.order.size(); ++i) {
        const int from = ring.order[i];
        const int to = ring.order[(i + 1) % ring.order.size()];
        if (placement[from].host != placement[to].host) {
          ring.netHops.push_back(NetHop{from, to,
                                        hostNic[from] >= 0 ? hostNic[from] : rankNic[from],
                                        hostNic[to] >= 0 ? hostNic[to] : rankNic[to]});
        }
      }
      // The model counts this channel's network traffic on its rail's NICs.
      for (size_t r = 0; r < hostNic.size(); ++r) {
        if (hostNic[r] >= 0) model.setRankNic(static_cast<int>(r), hostNic[r]);
      }
    }
    BRAID_ASSIGN_OR_RETURN(const OrderQuality quality,
                           model.evaluate(ring.order, /*cycle=*/true, residual));
    ring.bandwidthGBs = quality.bandwidthGBs;
    if (options.channelCapGBs > 0) {
      ring.bandwidthGBs = std::min(ring.bandwidthGBs, options.channelCapGBs);
    }
    if (channel > 0 && ring.bandwidthGBs < kNegligibleGBs) break;
    bool crossesLinks = false;
    if (!std::isinf(ring.bandwidthGBs)) {
      BRAID_TRY(consume(model, ring.order, ring.bandwidthGBs, &residual, &crossesLinks));
    }
    for (size_t r = 0; r < rankNic.size(); ++r) model.setRankNic(static_cast<int>(r), rankNic[r]);
    plan.channels.push_back(std::move(ring));
    // A ring that crosses no link (all ranks on one device) needs no second.
    if (!crossesLinks) break;
  }
  return plan;
}

}  // namespace

Result<RingPlan> searchRings(const Graph& graph, const Paths& paths, const Placement& placement,
                             const SearchOptions& options) {
  BRAID_TRY(checkPlacement(graph, placement));
  // NCCL_CROSS_NIC=2 keeps the rails, as 0 does. NCCL's 2 may cross them where that moves
  // more; weighing that needs what NCCL's PXN does (a rank far from its rail's NIC hands its
  // traffic over NVLink to the GPU beside it), which this model does not know: without it, an
  // 8-GPU 8-NIC machine would look faster crossing rails (docs/topology.md).
  return searchRingsOf(graph, paths, placement, options, options.crossNic != 1);
}

namespace {

// Where tree `t` of `trees` meets the other hosts from host `h` (whose ranks are `ranks`): its
// head (an index into `ranks`) and the NIC it uses there (-1: the head's own). Across hosts on
// rails, tree t runs on rail t mod R, its head a rank nearest that rail's NIC (the next one each
// time the rail comes round), as NCCL gives each channel's tree the channel's NIC; otherwise
// the first tree's head is the host's first rank and the second's its middle one.
struct TreeHead {
  int index;
  int nic;
};

TreeHead treeHead(int t, int railCount, const std::vector<int>& ranks, const HostRails* rails) {
  const int n = static_cast<int>(ranks.size());
  if (railCount == 0 || rails == nullptr || rails->nics.empty()) return {((t % 2) * n) / 2, -1};
  const size_t rail = static_cast<size_t>(t % railCount) % rails->nics.size();
  const std::vector<int>& near = rails->near[rail];
  const size_t turn = static_cast<size_t>(t / railCount);
  return {near[turn % near.size()], rails->nics[rail]};
}

// How many trees to plan: one for a single rank; across hosts on rails, one per rail (an even
// count, so that every rail's trees come in both shapes where rails are odd); else two.
int treeCount(size_t ranks, size_t hosts, int railCount) {
  if (ranks == 1) return 1;
  if (hosts < 2 || railCount <= 2) return 2;
  return railCount % 2 == 0 ? railCount : 2 * railCount;
}

}  // namespace

Result<TreePlan> searchTrees(const Graph& graph, const Paths& paths, const Placement& placement,
                             const SearchOptions& options) {
  BRAID_TRY(checkPlacement(graph, placement));
  const std::vector<std::vector<int>> hosts = ranksByHost(graph, placement);
  const std::vector<int> rankNic = assignNics(graph, paths, placement);
  StepModel model(graph, paths, placement, rankNic);
  const std::vector<double>& capacity = model.capacity();
  const int count = static_cast<int>(hosts.size());
  std::vector<HostRails> rails;  // by host, where trees across hosts go on rails
  int railCount = 0;
  if (count > 1 && options.crossNic != 1) {
    for (const std::vector<int>& ranks : hosts) {
      rails.push_back(hostRails(graph, paths, placement, ranks));
      railCount = std::max(railCount, static_cast<int>(rails.back().nics.size()));
    }
  }
  TreePlan plan;
  const int trees = treeCount(placement.size(), hosts.size(), railCount);
  for (int t = 0; t < trees; ++t) {
    Tree tree;
    tree.ranks.resize(placement.size());
    tree.bandwidthGBs = std::numeric_limits<double>::infinity();
    std::vector<int> heads;
    std::vector<int> headNics;  // by host: the NIC its head meets the other hosts by
    for (size_t h = 0; h < hosts.size(); ++h) {
      const std::vector<int>& ranks = hosts[h];
      const TreeHead at = treeHead(t, railCount, ranks, rails.empty() ? nullptr : &rails[h]);
      BRAID_ASSIGN_OR_RETURN(std::vector<int> chain,
                             bestOrder(model, ranks, ranks[at.index], -1, OrderShape::kPathFreeEnd,
                                       capacity, options.budget));
      for (size_t i = 1; i < chain.size(); ++i) {
        tree.ranks[chain[i]].parent = chain[i - 1];
        tree.ranks[chain[i - 1]].children.push_back(chain[i]);
        BRAID_ASSIGN_OR_RETURN(const double bw,
                               stepBandwidth(model, chain[i], chain[i - 1], capacity));
        tree.bandwidthGBs = std::min(tree.bandwidthGBs, bw);
      }
      heads.push_back(chain.front());
      headNics.push_back(at.nic >= 0 ? at.nic : rankNic[chain.front()]);
      tree.chains.push_back(std::move(chain));
    }
    const std::vector<int> parents = hostTreeParents(count, t % 2);
    for (int h = 0; h < count; ++h) {
      const int head = heads[h];
      if (parents[h] < 0) {
        tree.root = head;
        continue;
      }
      const int parentHead = heads[parents[h]];
      tree.ranks[head].parent = parentHead;
      tree.ranks[parentHead].children.push_back(head);
      tree.netHops.push_back(NetHop{head, parentHead, headNics[h], headNics[parents[h]]});
      BRAID_ASSIGN_OR_RETURN(const double bw, stepBandwidth(model, head, parentHead, capacity));
      tree.bandwidthGBs = std::min(tree.bandwidthGBs, bw);
    }
    plan.trees.push_back(std::move(tree));
  }
  return plan;
}

}  // namespace braid::topology
