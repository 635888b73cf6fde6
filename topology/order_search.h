// The engine under the ring and tree search (search.h): the cost of a step
// from one rank to the next, and the search for the best order in which to
// visit a set of ranks, as a cycle (a ring) or as a path (a host's chain).
//
// Terms. A *step* sends from rank a to rank b; it crosses the directed
// links of the path between their devices (none when they share one). A
// link's *residual* is what earlier channels left of its bandwidth. An
// order's *bandwidth* is what every step can move at once: the least, over
// the links it crosses, of residual / (number of its steps that cross it),
// so a ring that crosses a link twice gets half of it. An order's *profile*
// counts its steps of each path type or worse.
//
// The best order has the highest bandwidth, then the least profile compared
// from the worst type down (fewest NET steps, then fewest SYS, then fewest
// PHB, ...), which is what keeps rings from crossing the socket link more
// often than they must. The search is a depth-first branch and bound from
// the order of the machine (localityOrder), trying the closest ranks first;
// it stops when an order reaches the bounds (the bandwidth at which the
// ranks first become connected, and as many crossings of each level as
// there are groups it separates) or after a fixed number of steps, so it is
// deterministic. Above kMaxSearchRanks ranks it keeps the order of the
// machine, which already meets the bounds on tree-shaped machines.
#pragma once

#include <array>
#include <vector>

#include "topology/graph.h"
#include "topology/paths.h"
#include "topology/placement.h"

namespace braid::topology {

inline constexpr int kMaxSearchRanks = 64;

/// One step's cost.
struct RankStep {
  PathType type = PathType::kDis;
  std::vector<int> links;  ///< directed link ids (StepModel::linkId) it crosses
};

/// The counts of an order's steps of each path type or worse, by type.
using Profile = std::array<int, kNumPathTypes>;

struct OrderQuality {
  double bandwidthGBs = 0;
  Profile profile{};
};
/// Whether a is better than b in the sense above.
bool betterOrder(const OrderQuality& a, const OrderQuality& b);

class StepModel {
 public:
  /// `rankNic[r]` is the NIC rank r leaves its host by (assignNics), or
  /// empty for a single host.
  StepModel(const Graph& graph, const Paths& paths, const Placement& placement,
            std::vector<int> rankNic);

  int linkCount() const { return static_cast<int>(capacity_.size()); }
  const std::vector<double>& capacity() const { return capacity_; }
  /// The id of the link from node a to node b, or -1 when there is none.
  int linkId(int a, int b) const;
  /// The step from rank a to rank b; between hosts through the NICs of
  /// rankNic. Fails when no path joins them.
  Result<RankStep> step(int a, int b);

  /// The bandwidth and profile of `order` on `residual` link bandwidths;
  /// `cycle` adds the step from the last rank back to the first.
  Result<OrderQuality> evaluate(const std::vector<int>& order, bool cycle,
                                const std::vector<double>& residual);
  /// How many times each link is crossed by `order`'s steps.
  Result<std::vector<int>> linkUses(const std::vector<int>& order, bool cycle);

  const Graph& graph() const { return graph_; }
  const Placement& placement() const { return placement_; }
  /// The NIC rank r leaves and enters its host by from now on (a channel's rail).
  void setRankNic(int rank, int nic) { rankNic_[static_cast<size_t>(rank)] = nic; }
  int rankNic(int rank) const { return rankNic_[static_cast<size_t>(rank)]; }

 private:
  std::vector<int> linksOf(const std::vector<int>& nodes) const;

  const Graph& graph_;
  const Paths& paths_;
  const Placement& placement_;
  std::vector<int> rankNic_;
  std::vector<int> linkBase_;  ///< id of node u's first link
  std::vector<double> capacity_;
  std::vector<RankStep> sameHost_;  ///< by device pair, filled on first use
  std::vector<bool> known_;
};

enum class OrderShape {
  kCycle,        ///< a ring: the last rank sends back to the first
  kPathToEnd,    ///< a chain from `start` to `end`
  kPathFreeEnd,  ///< a chain from `start`, ending anywhere
};

/// The best order of `ranks` (given in the order of the machine) that
/// starts at `start` and, for kPathToEnd, ends at `end`; on `residual` link
/// bandwidths. `budget` bounds the search steps.
Result<std::vector<int>> bestOrder(StepModel& model, const std::vector<int>& ranks, int start,
                                   int end, OrderShape shape, const std::vector<double>& residual,
                                   long budget);

}  // namespace braid::topology
