#include "topology/order_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace braid::topology {

namespace {

constexpr double kInfinite = std::numeric_limits<double>::infinity();

// -1, 0, 1 as x is less than, about equal to, or more than y: bandwidths
// computed along different routes from the same figures may differ in the
// last bits.
int compareBandwidth(double x, double y) {
  if (x == y) return 0;
  if (std::isinf(x) || std::isinf(y)) return x < y ? -1 : 1;
  if (std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y))) return 0;
  return x < y ? -1 : 1;
}

// Compares profiles from the worst type down: -1 when a has fewer bad steps.
int compareProfile(const Profile& a, const Profile& b) {
  for (int t = kNumPathTypes - 1; t >= 0; --t) {
    if (a[t] != b[t]) return a[t] < b[t] ? -1 : 1;
  }
  return 0;
}

void addToProfile(Profile* profile, PathType type, int delta) {
  for (int t = 0; t <= static_cast<int>(type); ++t) (*profile)[t] += delta;
}

struct UnionFind {
  explicit UnionFind(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); }
  bool join(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return false;
    parent[b] = a;
    return true;
  }
  std::vector<int> parent;
};

// The depth-first branch and bound over orders of `m` local ranks.
class OrderSearch {
 public:
  OrderSearch(std::vector<std::vector<const RankStep*>> steps, int start, int end, OrderShape shape,
              const std::vector<double>& residual, long budget)
      : steps_(std::move(steps)),
        m_(static_cast<int>(steps_.size())),
        start_(start),
        end_(end),
        shape_(shape),
        residual_(residual),
        budget_(budget),
        uses_(residual.size(), 0) {}

  std::vector<int> run(const std::vector<int>& initial) {
    computeBounds();
    best_ = initial;
    bestQuality_ = evaluate(initial);
    if (optimal(bestQuality_)) return best_;
    order_.assign(1, start_);
    used_.assign(m_, false);
    used_[start_] = true;
    bandwidth_ = kInfinite;
    profile_ = Profile{};
    descend();
    return best_;
  }

 private:
  double staticBandwidth(int a, int b) const {
    double bw = kInfinite;
    for (int link : steps_[a][b]->links) bw = std::min(bw, residual_[link]);
    return bw;
  }

  // The bounds no order can beat: the bandwidth at which the ranks become
  // connected, and for each level, one crossing per group of ranks that
  // closer steps cannot join (one less for a path).
  void computeBounds() {
    std::vector<std::pair<double, std::pair<int, int>>> edges;
    for (int a = 0; a < m_; ++a) {
      for (int b = a + 1; b < m_; ++b) {
        edges.push_back({std::max(staticBandwidth(a, b), staticBandwidth(b, a)), {a, b}});
      }
    }
    std::stable_sort(edges.begin(), edges.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    UnionFind connected(m_);
    int groups = m_;
    upperBandwidth_ = kInfinite;
    for (const auto& [bw, pair] : edges) {
      if (groups == 1) break;
      if (connected.join(pair.first, pair.second)) {
        --groups;
        upperBandwidth_ = bw;
      }
    }
    const bool cycle = shape_ == OrderShape::kCycle;
    for (int level = 0; level < kNumPathTypes; ++level) {
      UnionFind closer(m_);
      int count = m_;
      for (int a = 0; a < m_; ++a) {
        for (int b = a + 1; b < m_; ++b) {
          const bool near = static_cast<int>(steps_[a][b]->type) < level ||
                            static_cast<int>(steps_[b][a]->type) < level;
          if (near && closer.join(a, b)) --count;
        }
      }
      lowerProfile_[level] = count >= 2 ? (cycle ? count : count - 1) : 0;
    }
  }

  bool optimal(const OrderQuality& quality) const {
    return compareBandwidth(quality.bandwidthGBs, upperBandwidth_) >= 0 &&
           quality.profile == lowerProfile_;
  }

  OrderQuality evaluate(const std::vector<int>& order) {
    OrderQuality quality;
    std::vector<int> uses(residual_.size(), 0);
    const int steps = shape_ == OrderShape::kCycle ? m_ : m_ - 1;
    for (int i = 0; i < steps; ++i) {
      const RankStep& step = *steps_[order[i]][order[(i + 1) % m_]];
      for (int link : step.links) ++uses[link];
      addToProfile(&quality.profile, step.type, 1);
    }
    quality.bandwidthGBs = kInfinite;
    for (size_t link = 0; link < uses.size(); ++link) {
      if (uses[link] > 0) {
        quality.bandwidthGBs = std::min(quality.bandwidthGBs, residual_[link] / uses[link]);
      }
    }
    return quality;
  }

  // Takes the step a -> b: counts its links and lowers the bandwidth.
  void apply(int a, int b) {
    const RankStep& step = *steps_[a][b];
    for (int link : step.links) {
      ++uses_[link];
      bandwidth_ = std::min(bandwidth_, residual_[link] / uses_[link]);
    }
    addToProfile(&profile_, step.type, 1);
  }

  void undo(int a, int b, double bandwidthBefore) {
    const RankStep& step = *steps_[a][b];
    for (int link : step.links) --uses_[link];
    bandwidth_ = bandwidthBefore;
    addToProfile(&profile_, step.type, -1);
  }

  std::vector<int> candidates(int last) const {
    std::vector<int> out;
    const int depth = static_cast<int>(order_.size());
    if (shape_ == OrderShape::kPathToEnd && depth == m_ - 1) return {end_};
    for (int c = 0; c < m_; ++c) {
      if (!used_[c] && !(shape_ == OrderShape::kPathToEnd && c == end_)) out.push_back(c);
    }
    std::stable_sort(out.begin(), out.end(), [&](int x, int y) {
      const PathType tx = steps_[last][x]->type;
      const PathType ty = steps_[last][y]->type;
      if (tx != ty) return tx < ty;
      return compareBandwidth(staticBandwidth(last, x), staticBandwidth(last, y)) > 0;
    });
    return out;
  }

  void descend() {
    const int last = order_.back();
    for (int next : candidates(last)) {
      if (done_ || budget_-- <= 0) return;
      const double before = bandwidth_;
      apply(last, next);
      order_.push_back(next);
      used_[next] = true;
      if (static_cast<int>(order_.size()) == m_) {
        considerComplete();
      } else if (!hopeless()) {
        descend();
      }
      used_[next] = false;
      order_.pop_back();
      undo(last, next, before);
    }
  }

  void considerComplete() {
    const double before = bandwidth_;
    const bool cycle = shape_ == OrderShape::kCycle;
    if (cycle) apply(order_.back(), order_.front());
    const OrderQuality quality{bandwidth_, profile_};
    if (betterOrder(quality, bestQuality_)) {
      bestQuality_ = quality;
      best_ = order_;
      done_ = optimal(quality);
    }
    if (cycle) undo(order_.back(), order_.front(), before);
  }

  // Whether no completion of the current prefix can beat the best order:
  // bandwidth only falls and the profile only grows as steps are added.
  bool hopeless() const {
    const int bw = compareBandwidth(bandwidth_, bestQuality_.bandwidthGBs);
    return bw < 0 || (bw == 0 && compareProfile(profile_, bestQuality_.profile) >= 0);
  }

  const std::vector<std::vector<const RankStep*>> steps_;  ///< [a][b], local indices
  const int m_;
  const int start_;
  const int end_;
  const OrderShape shape_;
  const std::vector<double>& residual_;
  long budget_;

  double upperBandwidth_ = kInfinite;
  Profile lowerProfile_{};
  std::vector<int> best_;
  OrderQuality bestQuality_;
  bool done_ = false;

  std::vector<int> order_;
  std::vector<bool> used_;
  std::vector<int> uses_;
  double bandwidth_ = kInfinite;
  Profile profile_{};
};

}  // namespace

bool betterOrder(const OrderQuality& a, const OrderQuality& b) {
  const int bw = compareBandwidth(a.bandwidthGBs, b.bandwidthGBs);
  if (bw != 0) return bw > 0;
  return compareProfile(a.profile, b.profile) < 0;
}

StepModel::StepModel(const Graph& graph, const Paths& paths, const Placement& placement,
                     std::vector<int> rankNic)
    : graph_(graph), paths_(paths), placement_(placement), rankNic_(std::move(rankNic)) {
  for (const Node& node : graph.nodes()) {
    linkBase_.push_back(static_cast<int>(capacity_.size()));
    for (const Link& link : node.links) capacity_.push_back(link.bandwidthGBs);
  }
  const size_t n = static_cast<size_t>(graph.size());
  sameHost_.resize(n * n);
  known_.assign(n * n, false);
}

int StepModel::linkId(int a, int b) const {
  const std::vector<Link>& links = graph_.node(a).links;
  for (size_t slot = 0; slot < links.size(); ++slot) {
    if (links[slot].to == b) return linkBase_[a] + static_cast<int>(slot);
  }
  return -1;
}

std::vector<int> StepModel::linksOf(const std::vector<int>& nodes) const {
  std::vector<int> links;
  for (size_t i = 0; i + 1 < nodes.size(); ++i) links.push_back(linkId(nodes[i], nodes[i + 1]));
  return links;
}

Result<RankStep> StepModel::step(int a, int b) {
  const RankPlace& pa = placement_[a];
  const RankPlace& pb = placement_[b];
  if (pa.device == pb.device) return RankStep{PathType::kLoc, {}};
  auto unreachable = [&](const std::string& why) {
    return invalidArgument("rank " + std::to_string(a) + " cannot reach rank " + std::to_string(b) +
                           ": " + why);
  };
  if (pa.host == pb.host) {
    const size_t key = static_cast<size_t>(pa.device) * graph_.size() + pb.device;
    if (!known_[key]) {
      const Path& path = paths_.between(pa.device, pb.device);
      if (path.type == PathType::kDis) return unreachable("no path joins their devices");
      sameHost_[key] = RankStep{path.type, linksOf(path.nodes)};
      known_[key] = true;
    }
    return sameHost_[key];
  }
  const int nicA = a < static_cast<int>(rankNic_.size()) ? rankNic_[a] : -1;
  const int nicB = b < static_cast<int>(rankNic_.size()) ? rankNic_[b] : -1;
  if (nicA < 0 || nicB < 0) return unreachable("a host has no NIC");
  int net = -1;
  for (const Link& link : graph_.node(nicA).links) {
    if (link.type == LinkType::kNet && graph_.findLink(nicB, link.to) != nullptr) net = link.to;
  }
  if (net < 0) {
    return unreachable(graph_.node(nicA).name + " and " + graph_.node(nicB).name +
                       " are on no common network");
  }
  std::vector<int> nodes = paths_.between(pa.device, nicA).nodes;
  nodes.push_back(net);
  for (int node : paths_.between(nicB, pb.device).nodes) nodes.push_back(node);
  return RankStep{PathType::kNet, linksOf(nodes)};
}

Result<std::vector<int>> StepModel::linkUses(const std::vector<int>& order, bool cycle) {
  std::vector<int> uses(capacity_.size(), 0);
  const size_t m = order.size();
  const size_t steps = cycle ? m : m - 1;
  for (size_t i = 0; m > 1 && i < steps; ++i) {
    BRAID_ASSIGN_OR_RETURN(const RankStep s, step(order[i], order[(i + 1) % m]));
    for (int link : s.links) ++uses[link];
  }
  return uses;
}

Result<OrderQuality> StepModel::evaluate(const std::vector<int>& order, bool cycle,
                                         const std::vector<double>& residual) {
  OrderQuality quality;
  quality.bandwidthGBs = kInfinite;
  const size_t m = order.size();
  const size_t steps = cycle ? m : m - 1;
  for (size_t i = 0; m > 1 && i < steps; ++i) {
    BRAID_ASSIGN_OR_RETURN(const RankStep s, step(order[i], order[(i + 1) % m]));
    addToProfile(&quality.profile, s.type, 1);
  }
  BRAID_ASSIGN_OR_RETURN(const std::vector<int> uses, linkUses(order, cycle));
  for (size_t link = 0; link < uses.size(); ++link) {
    if (uses[link] > 0) {
      quality.bandwidthGBs = std::min(quality.bandwidthGBs, residual[link] / uses[link]);
    }
  }
  return quality;
}

Result<std::vector<int>> bestOrder(StepModel& model, const std::vector<int>& ranks, int start,
                                   int end, OrderShape shape, const std::vector<double>& residual,
                                   long budget) {
  const int m = static_cast<int>(ranks.size());
  auto local = [&](int rank) {
    return static_cast<int>(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
  };
  const int startLocal = local(start);
  const int endLocal = shape == OrderShape::kPathToEnd ? local(end) : -1;
  if (startLocal == m || endLocal == m || (endLocal == startLocal && m > 1)) {
    return internalError("bestOrder: start or end is not among the ranks, or they coincide");
  }
  if (m == 1) return ranks;
  // The steps between every pair, kept where the search can point at them.
  std::vector<RankStep> storage(static_cast<size_t>(m) * m);
  std::vector<std::vector<const RankStep*>> steps(m, std::vector<const RankStep*>(m, nullptr));
  if (m <= kMaxSearchRanks) {
    for (int a = 0; a < m; ++a) {
      for (int b = 0; b < m; ++b) {
        if (a == b) {
          storage[a * m + b] = RankStep{PathType::kLoc, {}};
        } else {
          BRAID_ASSIGN_OR_RETURN(storage[a * m + b], model.step(ranks[a], ranks[b]));
        }
        steps[a][b] = &storage[a * m + b];
      }
    }
  }
  // The order of the machine, from start (to end).
  std::vector<int> initial{startLocal};
  for (int i = 0; i < m; ++i) {
    if (i != startLocal && i != endLocal) initial.push_back(i);
  }
  if (endLocal >= 0) initial.push_back(endLocal);
  std::vector<int> order = initial;
  if (m <= kMaxSearchRanks) {
    order =
        OrderSearch(std::move(steps), startLocal, endLocal, shape, residual, budget).run(initial);
  }
  std::vector<int> out;
  for (int i : order) out.push_back(ranks[i]);
  return out;
}

}  // namespace braid::topology
