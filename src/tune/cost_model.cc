// The hop counts and bytes of each algorithm (costShape) and the model that
// turns them into microseconds (predictUs). docs/tuning.md derives every
// formula; the comments here say only what each count stands for.
#include "tune/cost_model.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace braid::tune {

void Model::fitNetwork(double ringGBs) {
  if (!(ringGBs > 0) || !std::isfinite(ringGBs)) return;
  constexpr int kSimple = static_cast<int>(algo::Protocol::kSimple);
  const double before = interHost[kSimple].bandwidthGBs;
  const double after = interHostMeasured && before > 0 ? std::min(before, ringGBs) : ringGBs;
  for (LinkCost& link : interHost) {
    link.bandwidthGBs = before > 0 ? link.bandwidthGBs * (after / before) : after;
  }
}

void Model::fitNetworkLatency(double us) {
  if (!(us > 0) || !std::isfinite(us)) return;
  for (LinkCost& link : interHost) link.latencyUs = std::max(link.latencyUs, us);
}

namespace {

using algo::Algorithm;
using algo::Protocol;

// GB/s (1e9 bytes per second) is 1e3 bytes per microsecond.
constexpr double kBytesPerUsPerGBs = 1e3;

Status checkQuery(const Query& q) {
  if (q.nranks < 1) {
    return invalidArgument("cost model: nranks must be at least 1, got " +
                           std::to_string(q.nranks));
  }
  if (q.nhosts < 1 || q.nhosts > q.nranks) {
    return invalidArgument("cost model: nhosts must be in [1, nranks=" + std::to_string(q.nranks) +
                           "], got " + std::to_string(q.nhosts));
  }
  if (q.nchannels < 1) {
    return invalidArgument("cost model: nchannels must be at least 1, got " +
                           std::to_string(q.nchannels));
  }
  return Status::success();
}

// Of a path of `hops` consecutive ring hops, how many cross hosts: the ring
// takes the hosts in order, so `nhosts` of its `nranks` edges cross, and a
// path of consecutive edges meets them in that proportion.
double ringCrossings(double hops, int nranks, int nhosts) {
  if (nhosts <= 1) return 0;
  return std::min(hops, std::round(hops * nhosts / nranks));
}

// The in-order tree has a node with two children from four ranks on; below
// that it is a chain, where no rank sends (or receives) a chunk twice.
double treeFanOut(int nranks) { return nranks >= 4 ? 2.0 : 1.0; }

// `label` names the figure as Model spells it ("intraHost[simple]", "p2p").
Status checkLinkNamed(const LinkCost& link, const std::string& label) {
  if (!(link.bandwidthGBs > 0) || !(link.latencyUs >= 0)) {
    return invalidArgument(
        "cost model: " + label + " needs a latency >= 0 and a bandwidth > 0, got " +
        std::to_string(link.latencyUs) + " us and " + std::to_string(link.bandwidthGBs) + " GB/s");
  }
  return Status::success();
}

Status checkLink(const LinkCost& link, const char* name, Protocol protocol) {
  return checkLinkNamed(link, std::string(name) + "[" + algo::protocolName(protocol) + "]");
}

// Whether the ranks of a host outnumber the CPUs they share.
bool sharesCores(const Model& m, const Query& q) {
  const int ranksPerHost = (q.nranks + q.nhosts - 1) / q.nhosts;
  return m.hostCores > 0 && ranksPerHost > m.hostCores;
}

Result<double> oneShotUs(const Model& m, const Query& q, const CostShape& shape,
                         Protocol protocol) {
  const bool shared = sharesCores(m, q);
  const int p = static_cast<int>(protocol);
  const OneShotCost& c = shared ? m.oneShotShared[p] : m.oneShot[p];
  if (!(c.readGBs > 0) || !(c.baseUs >= 0) || !(c.perPeerUs >= 0)) {
    return invalidArgument(std::string("cost model: ") + (shared ? "oneShotShared[" : "oneShot[") +
                           algo::protocolName(protocol) +
                           "] needs times >= 0 and a read rate > 0, got read " +
                           std::to_string(c.readGBs) + " GB/s");
  }
  return c.baseUs + shape.peers * c.perPeerUs +
         shape.peers * shape.peerBytes / (c.readGBs * kBytesPerUsPerGBs);
}

Result<double> pipelineUs(const Model& m, const Query& q, const CostShape& shape,
                          Algorithm algorithm, Protocol protocol) {
  const int p = static_cast<int>(protocol);
  const bool shared = sharesCores(m, q);
  const LinkCost& intra = shared ? m.intraHostShared[p] : m.intraHost[p];
  BRAID_TRY(checkLink(intra, shared ? "intraHostShared" : "intraHost", protocol));
  const HopScale scale = algorithm == Algorithm::kTree ? m.tree[p] : HopScale{};

  double latency = shape.intraHops * intra.latencyUs;
  double bandwidth = intra.bandwidthGBs;
  if (shape.crossesHosts) {
    BRAID_TRY(checkLink(m.interHost[p], "interHost", protocol));
    latency += shape.interHops * m.interHost[p].latencyUs;
    bandwidth = std::min(bandwidth, m.interHost[p].bandwidthGBs);
  }
  // Channels that run one after another each pay the whole chain of hops.
  const int repeats = m.channelsParallel ? 1 : q.nchannels;
  latency *= repeats * scale.latency;
  bandwidth *= scale.bandwidth;
  if (m.channelGBs[p] > 0) {
    const int engines = m.channelsParallel ? q.nchannels : 1;
    bandwidth = std::min(bandwidth, engines * m.channelGBs[p]);
  }
  if (!(bandwidth > 0)) {
    return invalidArgument(std::string("cost model: the ") + algo::algorithmName(algorithm) +
                           " scale of " + algo::protocolName(protocol) +
                           " leaves no bandwidth; its bandwidth factor must be > 0");
  }
  return latency + shape.busBytes / (bandwidth * kBytesPerUsPerGBs);
}

}  // namespace

bool supports(Algorithm algorithm, const Query& query) {
  const Collective c = query.collective;
  switch (algorithm) {
    case Algorithm::kRing:
      return c == Collective::kAllReduce || c == Collective::kReduceScatter ||
             c == Collective::kAllGather || c == Collective::kBroadcast || c == Collective::kReduce;
    case Algorithm::kTree:
      return c == Collective::kAllReduce || c == Collective::kBroadcast || c == Collective::kReduce;
    case Algorithm::kOneShot:
      return c == Collective::kAllReduce && query.nhosts == 1;
  }
  return false;
}

int treeDepth(int n) {
  int depth = 0;
  for (long long reach = 1; reach < n; reach <<= 1) ++depth;
  return depth;
}

Result<CostShape> costShape(const Query& q, Algorithm algorithm) {
  BRAID_TRY(checkQuery(q));
  if (!supports(algorithm, q)) {
    return invalidUsage(std::string(algo::algorithmName(algorithm)) + " cannot run " +
                        collectiveName(q.collective) +
                        (algorithm == Algorithm::kOneShot && q.nhosts > 1
                             ? " across hosts (one-shot reads its peers' memory)"
                             : ""));
  }
  const int n = q.nranks;
  const double bytes = static_cast<double>(q.bytes);
  CostShape s;
  if (n == 1) {  // a rank alone copies its input to its output
    s.busBytes = bytes;
    return s;
  }
  if (algorithm == Algorithm::kOneShot) {
    s.peers = n - 1;
    s.peerBytes = bytes;
    return s;
  }
  s.crossesHosts = q.nhosts > 1;
  const double blocks = static_cast<double>(n - 1) / n;  // share of the data a ring rank passes on
  if (algorithm == Algorithm::kRing) {
    double hops = 0;
    switch (q.collective) {
      case Collective::kAllReduce:  // reduce-scatter then all-gather: 2(N-1) steps
        hops = 2.0 * (n - 1);
        s.busBytes = 2 * blocks * bytes;
        s.interHops = ringCrossings(hops, n, q.nhosts);
        break;
      case Collective::kReduceScatter:
      case Collective::kAllGather:
        hops = n - 1;
        s.busBytes = blocks * bytes;
        s.interHops = ringCrossings(hops, n, q.nhosts);
        break;
      case Collective::kBroadcast:
      case Collective::kReduce:  // a chain along the ring from (or to) the root
        hops = n - 1;
        s.busBytes = bytes;
        s.interHops = q.nhosts - 1;
        break;
    }
    s.intraHops = hops - s.interHops;
    return s;
  }
  // Tree: the levels nearest the root join subtrees of whole hosts, so the
  // top treeDepth(nhosts) levels cross hosts and the rest stay within one.
  const int depth = treeDepth(n);
  const int crossingLevels = std::min(treeDepth(q.nhosts), depth);
  const double passes = q.collective == Collective::kAllReduce ? 2 : 1;  // up, then down
  s.interHops = passes * crossingLevels;
  s.intraHops = passes * (depth - crossingLevels);
  // Broadcast and reduce: a node with two children sends (or takes in) each
  // chunk twice. All-reduce runs two trees on half the data each; the
  // busiest rank sends its half up and twice down in the tree where it has
  // two children and once up in the other (3/2 + 1/2), or up and down in
  // both where the trees are chains (1/2 + 1/2 + 1/2 + 1/2): twice the data
  // either way. Two ranks are a root and a leaf in each tree: once the data.
  if (q.collective == Collective::kAllReduce) {
    s.busBytes = (n == 2 ? 1.0 : 2.0) * bytes;
  } else {
    s.busBytes = treeFanOut(n) * bytes;
  }
  return s;
}

Result<double> predictUs(const Model& model, const Query& query, Algorithm algorithm,
                         Protocol protocol) {
  BRAID_ASSIGN_OR_RETURN(const CostShape shape, costShape(query, algorithm));
  if (query.bytes == 0) return 0.0;  // a call with no data returns at once
  double us = 0;
  if (query.nranks == 1) {
    const LinkCost& copy = model.intraHost[static_cast<int>(protocol)];
    BRAID_TRY(checkLink(copy, "intraHost", protocol));
    us = shape.busBytes / (copy.bandwidthGBs * kBytesPerUsPerGBs);
  } else if (algorithm == Algorithm::kOneShot) {
    BRAID_ASSIGN_OR_RETURN(us, oneShotUs(model, query, shape, protocol));
  } else {
    BRAID_ASSIGN_OR_RETURN(us, pipelineUs(model, query, shape, algorithm, protocol));
  }
  us += model.callUs;
  if (query.deterministic) us *= model.deterministicSlowdown[static_cast<int>(algorithm)];
  return us;
}

Result<double> predictP2pUs(const Model& model, const P2pQuery& query) {
  Query shapeOnly;
  shapeOnly.nranks = query.nranks;
  shapeOnly.nhosts = query.nhosts;
  BRAID_TRY(checkQuery(shapeOnly));
  const size_t crossing = std::max(query.sendBytes, query.recvBytes);
  if (crossing == 0 && query.selfBytes == 0) return 0.0;  // nothing to move returns at once
  const int p = static_cast<int>(Protocol::kSimple);
  const bool shared = sharesCores(model, shapeOnly);
  // The batch's own hop where calibrated; a bandwidth of 0 marks it unset
  // (a model filled before p2p existed, or braid-sim's), and the ring's
  // Simple hop over the same CPUs stands in.
  const LinkCost& own = shared ? model.p2pShared : model.p2p;
  const LinkCost& ringHop = shared ? model.intraHostShared[p] : model.intraHost[p];
  const bool calibrated = own.bandwidthGBs > 0;
  const LinkCost& intra = calibrated ? own : ringHop;
  BRAID_TRY(calibrated
                ? checkLinkNamed(own, shared ? "p2pShared" : "p2p")
                : checkLink(ringHop, shared ? "intraHostShared" : "intraHost", Protocol::kSimple));
  // A self-send is a copy within the rank, as a one-rank collective is.
  const LinkCost& copy = model.intraHost[p];
  BRAID_TRY(checkLink(copy, "intraHost", Protocol::kSimple));
  double us = model.callUs + query.selfBytes / (copy.bandwidthGBs * kBytesPerUsPerGBs);
  if (crossing == 0) return us;
  LinkCost hop = intra;
  if (query.crossesHosts) {
    BRAID_TRY(checkLink(model.interHost[p], "interHost", Protocol::kSimple));
    hop.latencyUs = std::max(hop.latencyUs, model.interHost[p].latencyUs);
    hop.bandwidthGBs = std::min(hop.bandwidthGBs, model.interHost[p].bandwidthGBs);
  }
  return us + hop.latencyUs + crossing / (hop.bandwidthGBs * kBytesPerUsPerGBs);
}

Result<std::optional<double>> crossoverBytes(const Model& model, Query query, Candidate a,
                                             Candidate b) {
  // Two sizes fix each line: time = fixed + slope * bytes, for bytes >= 1.
  constexpr double kLow = 1, kHigh = 1 << 30;
  double fixed[2], slope[2];
  const Candidate both[2] = {a, b};
  for (int i = 0; i < 2; ++i) {
    query.bytes = static_cast<size_t>(kLow);
    BRAID_ASSIGN_OR_RETURN(const double low,
                           predictUs(model, query, both[i].algorithm, both[i].protocol));
    query.bytes = static_cast<size_t>(kHigh);
    BRAID_ASSIGN_OR_RETURN(const double high,
                           predictUs(model, query, both[i].algorithm, both[i].protocol));
    slope[i] = (high - low) / (kHigh - kLow);
    fixed[i] = low - slope[i] * kLow;
  }
  if (slope[0] == slope[1]) return std::optional<double>();
  const double bytes = (fixed[1] - fixed[0]) / (slope[0] - slope[1]);
  if (!(bytes > kLow)) return std::optional<double>();
  return std::optional<double>(bytes);
}

}  // namespace braid::tune
