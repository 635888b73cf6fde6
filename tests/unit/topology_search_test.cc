// Ring and tree search on the fixtures: rings that visit every rank once,
// cross the socket link as few times as possible (checked against every
// ordering for small machines), leave each host by the nearest NIC and
// spread channels over NICs; trees whose two halves complement each other.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "topology/order_search.h"
#include "topology/search.h"
#include "unit/topology_fixtures.h"

namespace braid::topology {
namespace {

using testing::kBridge;
using testing::kDgx;
using testing::kPcie4;
using testing::kTwoBridgeHosts;
using testing::kTwoDgxHosts;
using testing::loadFixture;

struct RankedMachine {
  Graph graph;
  Paths paths;
  Placement placement;
};

RankedMachine setUp(Graph graph, int nranks) {
  RankedMachine s;
  s.graph = std::move(graph);
  s.paths = Paths(s.graph);
  auto placement = placeRanksEvenly(s.graph, nranks);
  EXPECT_TRUE(placement.ok()) << placement.status().message();
  if (placement.ok()) s.placement = placement.value();
  return s;
}

RingPlan rings(const RankedMachine& s, SearchOptions options = {}) {
  auto plan = searchRings(s.graph, s.paths, s.placement, options);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return plan.ok() ? plan.value() : RingPlan();
}

void expectPermutation(const std::vector<int>& order, int n) {
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(sorted, all);
}

// The best quality any ring of the ranks can have, by trying them all.
OrderQuality bestByBruteForce(const RankedMachine& s) {
  const int n = static_cast<int>(s.placement.size());
  StepModel model(s.graph, s.paths, s.placement, {});
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  OrderQuality best;
  best.bandwidthGBs = -1;
  do {
    const OrderQuality quality = model.evaluate(order, true, model.capacity()).value();
    if (best.bandwidthGBs < 0 || betterOrder(quality, best)) best = quality;
  } while (std::next_permutation(order.begin() + 1, order.end()));
  return best;
}

void expectOptimal(const RankedMachine& s) {
  const RingPlan plan = rings(s);
  ASSERT_FALSE(plan.channels.empty());
  const int n = static_cast<int>(s.placement.size());
  expectPermutation(plan.channels[0].order, n);
  StepModel model(s.graph, s.paths, s.placement, {});
  const OrderQuality found = model.evaluate(plan.channels[0].order, true, model.capacity()).value();
  const OrderQuality best = bestByBruteForce(s);
  EXPECT_FALSE(betterOrder(best, found))
      << "a ring of " << best.bandwidthGBs << " GB/s with " << best.profile[6]
      << " socket crossings beats the one found (" << found.bandwidthGBs << " GB/s, "
      << found.profile[6] << ")";
  EXPECT_EQ(found.profile[static_cast<int>(PathType::kSys)],
            best.profile[static_cast<int>(PathType::kSys)]);
}

TEST(TopologySearch, DgxRingFollowsTheMachine) {
  const RankedMachine s = setUp(loadFixture(kDgx), 8);
  const RingPlan plan = rings(s);
  ASSERT_EQ(plan.channels.size(), 1u) << "one ring saturates every GPU's NVLinks";
  EXPECT_EQ(plan.channels[0].order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_DOUBLE_EQ(plan.channels[0].bandwidthGBs, 450);
  EXPECT_EQ(stepsAtLeast(s.paths, s.placement, plan.channels[0].order, PathType::kSys), 0);
  EXPECT_TRUE(plan.channels[0].netHops.empty());
}

TEST(TopologySearch, ChannelCapSpreadsTheBandwidth) {
  const RankedMachine s = setUp(loadFixture(kDgx), 8);
  SearchOptions options;
  options.channelCapGBs = 100;
  const RingPlan plan = rings(s, options);
  ASSERT_EQ(plan.channels.size(), 5u);  // 4 x 100 + 50 = 450
  EXPECT_DOUBLE_EQ(plan.channels[4].bandwidthGBs, 50);
  EXPECT_DOUBLE_EQ(plan.totalGBs(), 450);
  options.maxChannels = 2;
  EXPECT_EQ(rings(s, options).channels.size(), 2u);
}

TEST(TopologySearch, PcieRingCrossesTheSocketLinkTwice) {
  const RankedMachine s = setUp(loadFixture(kPcie4), 4);
  const RingPlan plan = rings(s);
  ASSERT_EQ(plan.channels.size(), 1u);
  EXPECT_EQ(stepsAtLeast(s.paths, s.placement, plan.channels[0].order, PathType::kSys), 2);
  EXPECT_DOUBLE_EQ(plan.channels[0].bandwidthGBs, 10);
  expectOptimal(s);
}

TEST(TopologySearch, RingsAreOptimalOnEveryFixture) {
  expectOptimal(setUp(loadFixture(kBridge), 4));
  expectOptimal(setUp(loadFixture(kDgx), 8));
  expectOptimal(setUp(loadFixture(kPcie4), 8));  // two ranks per GPU
  expectOptimal(setUp(loadFixture(kBridge), 7));
}

TEST(TopologySearch, BridgeRingUsesTheNvlink) {
  const RankedMachine s = setUp(loadFixture(kBridge), 4);
  const std::vector<int> order = rings(s).channels[0].order;
  EXPECT_EQ(stepsAtLeast(s.paths, s.placement, order, PathType::kSys), 2);
  // GPUs 0 and 1 are neighbours (over the NVLink), and so are 2 and 3.
  auto adjacent = [&](int a, int b) {
    for (size_t i = 0; i < order.size(); ++i) {
      const int next = order[(i + 1) % order.size()];
      if ((order[i] == a && next == b) || (order[i] == b && next == a)) return true;
    }
    return false;
  };
  EXPECT_TRUE(adjacent(0, 1));
  EXPECT_TRUE(adjacent(2, 3));
}

// Three sockets of two GPUs each, with the ranks numbered across them: the
// best ring still crosses between sockets only three times.
TEST(TopologySearch, ThreeSocketsScrambledRanks) {
  Graph graph;
  int cpus[3];
  for (int c = 0; c < 3; ++c) {
    Node cpu = testing::makeNode(NodeType::kCpu, "cpu" + std::to_string(c));
    cpu.numaId = c;
    cpus[c] = graph.addNode(cpu);
  }
  for (int a = 0; a < 3; ++a) {
    for (int b = a + 1; b < 3; ++b) graph.connect(cpus[a], cpus[b], LinkType::kSys, 10);
  }
  // GPU i sits on socket i % 3, so CUDA order interleaves the sockets.
  for (int i = 0; i < 6; ++i) {
    Node gpu = testing::makeNode(NodeType::kGpu, "gpu" + std::to_string(i));
    gpu.cudaDevice = i;
    graph.connect(cpus[i % 3], graph.addNode(gpu), LinkType::kPci, 24);
  }
  const RankedMachine s = setUp(std::move(graph), 6);
  const RingPlan plan = rings(s);
  EXPECT_EQ(stepsAtLeast(s.paths, s.placement, plan.channels[0].order, PathType::kSys), 3);
  expectOptimal(s);
}

TEST(TopologySearch, CpuRanksGroupByNumaNode) {
  Graph graph;
  Node cpu0 = testing::makeNode(NodeType::kCpu, "cpu0");
  cpu0.numaId = 0;
  Node cpu1 = testing::makeNode(NodeType::kCpu, "cpu1");
  cpu1.numaId = 1;
  const int a = graph.addNode(cpu0);
  const int b = graph.addNode(cpu1);
  graph.connect(a, b, LinkType::kSys, 16);
  const RankedMachine s = setUp(std::move(graph), 8);
  const RingPlan plan = rings(s);
  ASSERT_EQ(plan.channels.size(), 1u);
  // Ranks are dealt round-robin over the NUMA nodes: even ranks on node 0.
  EXPECT_EQ(plan.channels[0].order, (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(stepsAtLeast(s.paths, s.placement, plan.channels[0].order, PathType::kSys), 2);
}

TEST(TopologySearch, ManyCpuRanksStayFastAndValid) {
  Graph graph;
  for (int n = 0; n < 4; ++n) {
    Node cpu = testing::makeNode(NodeType::kCpu, "cpu" + std::to_string(n));
    cpu.numaId = n;
    graph.addNode(cpu);
  }
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) graph.connect(a, b, LinkType::kSys, 16);
  }
  const RankedMachine s = setUp(std::move(graph), 1000);
  const RingPlan plan = rings(s);
  ASSERT_EQ(plan.channels.size(), 1u);
  expectPermutation(plan.channels[0].order, 1000);
  EXPECT_EQ(stepsAtLeast(s.paths, s.placement, plan.channels[0].order, PathType::kSys), 4);
}

TEST(TopologySearch, AllRanksOnOneGpuNeedNoLink) {
  Graph graph;
  const int cpu = graph.addNode(testing::makeNode(NodeType::kCpu, "cpu0"));
  graph.connect(cpu, graph.addNode(testing::makeNode(NodeType::kGpu, "gpu0")), LinkType::kPci, 24);
  const RankedMachine s = setUp(std::move(graph), 3);
  const RingPlan plan = rings(s);
  ASSERT_EQ(plan.channels.size(), 1u);
  EXPECT_TRUE(std::isinf(plan.channels[0].bandwidthGBs));
}

SearchOptions crossingNics() {
  SearchOptions options;
  options.crossNic = 1;
  return options;
}

// Across hosts, with crossNic = 1: each ring is one chain per host, entered
// and left once, through the NIC nearest the rank that enters or leaves.
void expectRingsUseNearestNics(const RankedMachine& s, const RingPlan& plan) {
  for (const Ring& ring : plan.channels) {
    expectPermutation(ring.order, static_cast<int>(s.placement.size()));
    int hostChanges = 0;
    for (size_t i = 0; i < ring.order.size(); ++i) {
      const int next = ring.order[(i + 1) % ring.order.size()];
      if (s.placement[ring.order[i]].host != s.placement[next].host) ++hostChanges;
    }
    EXPECT_EQ(hostChanges, s.graph.hostCount());
    EXPECT_EQ(static_cast<int>(ring.netHops.size()), hostChanges);
    for (const NetHop& hop : ring.netHops) {
      const std::vector<int> sendSide =
          nearestNics(s.graph, s.paths, s.placement[hop.fromRank].device);
      const std::vector<int> recvSide =
          nearestNics(s.graph, s.paths, s.placement[hop.toRank].device);
      EXPECT_NE(std::find(sendSide.begin(), sendSide.end(), hop.sendNic), sendSide.end())
          << "rank " << hop.fromRank << " leaves by " << s.graph.node(hop.sendNic).name;
      EXPECT_NE(std::find(recvSide.begin(), recvSide.end(), hop.recvNic), recvSide.end())
          << "rank " << hop.toRank << " enters by " << s.graph.node(hop.recvNic).name;
    }
  }
}

TEST(TopologySearch, TwoDgxHostsSpreadChannelsOverAllNics) {
  const RankedMachine s = setUp(loadFixture(kTwoDgxHosts), 16);
  const RingPlan plan = rings(s, crossingNics());
  ASSERT_EQ(plan.channels.size(), 8u);
  expectRingsUseNearestNics(s, plan);
  std::set<int> sending, receiving;
  for (const Ring& ring : plan.channels) {
    EXPECT_DOUBLE_EQ(ring.bandwidthGBs, 50);  // one NDR port each way
    for (const NetHop& hop : ring.netHops) {
      sending.insert(hop.sendNic);
      receiving.insert(hop.recvNic);
    }
  }
  EXPECT_EQ(sending.size(), 16u) << "every NIC of both hosts sends for some channel";
  EXPECT_EQ(receiving.size(), 16u);
  // The first four channels already use eight different NICs per host.
  std::set<int> firstFour;
  for (int c = 0; c < 4; ++c) {
    for (const NetHop& hop : plan.channels[c].netHops) firstFour.insert(hop.sendNic);
  }
  EXPECT_EQ(firstFour.size(), 8u);
  EXPECT_DOUBLE_EQ(plan.totalGBs(), 400);
}

TEST(TopologySearch, TwoBridgeHostsLeaveByTheNearestNic) {
  const RankedMachine s = setUp(loadFixture(kTwoBridgeHosts), 8);
  const RingPlan plan = rings(s, crossingNics());
  ASSERT_FALSE(plan.channels.empty());
  expectRingsUseNearestNics(s, plan);
  // Channel 0 enters each host at GPU 0 and leaves at GPU 3: its chain
  // crosses the socket link once, as it must.
  const std::vector<int>& order = plan.channels[0].order;
  int sys = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const RankPlace& a = s.placement[order[i]];
    const RankPlace& b = s.placement[order[(i + 1) % order.size()]];
    if (a.host == b.host && s.paths.type(a.device, b.device) == PathType::kSys) ++sys;
  }
  EXPECT_EQ(sys, 2);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  // A second channel crosses the socket links the other way.
  ASSERT_EQ(plan.channels.size(), 2u);
  EXPECT_DOUBLE_EQ(plan.totalGBs(), 20);
}

// On rails (the default): each channel enters and leaves every host by one
// NIC, the same rail (index among the host's NICs) on every host, entering
// at a rank nearest that NIC.
void expectRingsOnRails(const RankedMachine& s, const RingPlan& plan) {
  for (size_t c = 0; c < plan.channels.size(); ++c) {
    const Ring& ring = plan.channels[c];
    expectPermutation(ring.order, static_cast<int>(s.placement.size()));
    ASSERT_EQ(static_cast<int>(ring.netHops.size()), s.graph.hostCount());
    std::set<std::string> railNames;
    for (size_t i = 0; i < ring.netHops.size(); ++i) {
      const NetHop& in = ring.netHops[i];
      const NetHop& out = ring.netHops[(i + 1) % ring.netHops.size()];
      // The hop into a host and the next hop out of it use one NIC.
      EXPECT_EQ(in.recvNic, out.sendNic) << "channel " << c;
      const std::vector<int> entrySide =
          nearestNics(s.graph, s.paths, s.placement[in.toRank].device);
      EXPECT_NE(std::find(entrySide.begin(), entrySide.end(), in.recvNic), entrySide.end())
          << "channel " << c << " enters at rank " << in.toRank << " far from "
          << s.graph.node(in.recvNic).name;
    }
    // Every NIC of the channel is the same rail: the same position among its host's NICs.
    std::set<size_t> positions;
    for (const NetHop& hop : ring.netHops) {
      std::vector<int> hostNics =
          s.graph.nodesOfType(NodeType::kNic, s.graph.node(hop.sendNic).host);
      positions.insert(std::find(hostNics.begin(), hostNics.end(), hop.sendNic) - hostNics.begin());
    }
    EXPECT_EQ(positions.size(), 1u) << "channel " << c << " crosses rails";
  }
}

TEST(TopologySearch, TwoDgxHostsKeepEachChannelOnItsRail) {
  const RankedMachine s = setUp(loadFixture(kTwoDgxHosts), 16);
  const RingPlan plan = rings(s);
  ASSERT_EQ(plan.channels.size(), 8u);
  expectRingsOnRails(s, plan);
  std::set<int> sending;
  for (const Ring& ring : plan.channels) {
    for (const NetHop& hop : ring.netHops) sending.insert(hop.sendNic);
  }
  EXPECT_EQ(sending.size(), 16u) << "every NIC of both hosts carries a channel";
}

// Each host has a NIC per CPU and a 10 GB/s link between the CPUs. On rails a channel enters
// and leaves by one NIC, so its chain crosses that link both ways and fills it: one channel, on
// rail 0, entering and leaving by the two GPUs beside mlx5_0. Crossing rails (NCCL_CROSS_NIC=1,
// TwoBridgeHostsLeaveByTheNearestNic) crosses it once each and gets two.
TEST(TopologySearch, TwoBridgeHostsKeepEachChannelOnItsRail) {
  const RankedMachine s = setUp(loadFixture(kTwoBridgeHosts), 8);
  const RingPlan plan = rings(s);
  ASSERT_EQ(plan.channels.size(), 1u);
  expectRingsOnRails(s, plan);
  EXPECT_DOUBLE_EQ(plan.totalGBs(), 10);
  const NetHop& in = plan.channels[0].netHops[1];  // into node-a
  const NetHop& out = plan.channels[0].netHops[0];
  EXPECT_EQ(s.graph.node(in.recvNic).name, "mlx5_0");
  // Both ends of node-a's chain are the GPUs under mlx5_0's switch.
  for (int rank : {in.toRank, out.fromRank}) {
    const std::string gpu = s.graph.node(s.placement[rank].device).name;
    EXPECT_TRUE(gpu == "gpu0" || gpu == "gpu1") << "rank " << rank << " on " << gpu;
  }
}

TEST(TopologySearch, HostWithoutNicCannotJoinARing) {
  auto graph = parseTopology(
      "<braid-topology version='1'>\n"
      "  <host name='a'><cpu name='cpu0'><gpu name='gpu0' bw='24'/>"
      "<nic name='eth0' speed='100' bw='24'/></cpu></host>\n"
      "  <host name='b'><cpu name='cpu0'><gpu name='gpu0' bw='24'/></cpu></host>\n"
      "  <net name='net'/><link a='a/eth0' b='net' type='NET' bw='12.5'/>\n"
      "</braid-topology>\n",
      "nonic.xml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  const RankedMachine s = setUp(std::move(graph).value(), 2);
  auto plan = searchRings(s.graph, s.paths, s.placement, SearchOptions{});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("a host has no NIC"), std::string::npos)
      << plan.status().message();
}

// Trees: every rank but the root has one parent, every host's ranks form
// one chain, and the trees between hosts complement each other.
void expectTree(const RankedMachine& s, const Tree& tree) {
  const int n = static_cast<int>(s.placement.size());
  int roots = 0, edges = 0;
  for (int r = 0; r < n; ++r) {
    if (tree.ranks[r].parent < 0) {
      ++roots;
      EXPECT_EQ(r, tree.root);
    }
    edges += static_cast<int>(tree.ranks[r].children.size());
    for (int child : tree.ranks[r].children) EXPECT_EQ(tree.ranks[child].parent, r);
  }
  EXPECT_EQ(roots, 1);
  EXPECT_EQ(edges, n - 1);
  int chained = 0;
  for (const std::vector<int>& chain : tree.chains) chained += static_cast<int>(chain.size());
  EXPECT_EQ(chained, n);
  EXPECT_EQ(static_cast<int>(tree.netHops.size()), s.graph.hostCount() - 1);
}

TEST(TopologySearch, DoubleTreeAcrossTwoDgxHostsOnEveryRail) {
  const RankedMachine s = setUp(loadFixture(kTwoDgxHosts), 16);
  auto plan = searchTrees(s.graph, s.paths, s.placement, SearchOptions{});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  // Eight rails: a tree on each, as NCCL's channels each take a NIC (was: 2 of the 8).
  ASSERT_EQ(plan.value().trees.size(), 8u);
  std::set<std::string> nicsUsed;
  for (size_t t = 0; t < plan.value().trees.size(); ++t) {
    const Tree& tree = plan.value().trees[t];
    expectTree(s, tree);
    for (const NetHop& hop : tree.netHops) {
      // Tree t's edge between hosts leaves and enters by rail t's NIC, from heads beside it.
      EXPECT_EQ(s.graph.node(hop.sendNic).name, "mlx5_" + std::to_string(t));
      EXPECT_EQ(s.graph.node(hop.recvNic).name, "mlx5_" + std::to_string(t));
      const std::vector<int> near = nearestNics(s.graph, s.paths, s.placement[hop.fromRank].device);
      EXPECT_EQ(near, std::vector<int>{hop.sendNic});
      nicsUsed.insert(s.graph.node(hop.sendNic).name);
    }
  }
  EXPECT_EQ(nicsUsed.size(), 8u);
  // The two shapes alternate: a host that is a leaf in tree 0 is inside tree 1.
  EXPECT_NE(plan.value().trees[0].root, plan.value().trees[1].root);
}

TEST(TopologySearch, TwoTreesWhereNicsMayBeCrossed) {
  const RankedMachine s = setUp(loadFixture(kTwoDgxHosts), 16);
  SearchOptions options;
  options.crossNic = 1;
  auto plan = searchTrees(s.graph, s.paths, s.placement, options);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan.value().trees.size(), 2u);
  const NetHop& first = plan.value().trees[0].netHops[0];
  const NetHop& second = plan.value().trees[1].netHops[0];
  EXPECT_NE(first.sendNic, second.sendNic);
}

TEST(TopologySearch, SingleHostTreesAreChains) {
  const RankedMachine s = setUp(loadFixture(kPcie4), 4);
  auto plan = searchTrees(s.graph, s.paths, s.placement, SearchOptions{});
  ASSERT_TRUE(plan.ok());
  for (const Tree& tree : plan.value().trees) {
    expectTree(s, tree);
    ASSERT_EQ(tree.chains.size(), 1u);
    EXPECT_EQ(stepsAtLeast(s.paths, s.placement, tree.chains[0], PathType::kSys), 2)
        << "a chain crosses the sockets once; closed into a ring, twice";
  }
  EXPECT_EQ(plan.value().trees[0].root, 0);
  EXPECT_EQ(plan.value().trees[1].root, 2);
}

TEST(TopologySearch, HostTreesAreTreesAndComplementEachOther) {
  for (int count = 1; count <= 40; ++count) {
    std::vector<std::vector<int>> children(2 * count);
    for (int t = 0; t < 2; ++t) {
      const std::vector<int> parents = hostTreeParents(count, t);
      int roots = 0;
      for (int h = 0; h < count; ++h) {
        if (parents[h] < 0) {
          ++roots;
          continue;
        }
        children[t * count + parents[h]].push_back(h);
        // Following parents ends at the root without a cycle.
        int steps = 0;
        for (int at = h; at >= 0 && steps <= count; at = parents[at]) ++steps;
        EXPECT_LE(steps, count) << "cycle in tree " << t << " of " << count;
      }
      EXPECT_EQ(roots, 1);
      for (int h = 0; h < count; ++h) EXPECT_LE(children[t * count + h].size(), 2u);
    }
    for (int h = 0; count > 1 && h < count; ++h) {
      EXPECT_FALSE(children[h].empty() && children[count + h].empty())
          << "host " << h << " of " << count << " is a leaf in both trees";
    }
  }
}

TEST(TopologySearch, LocalityOrderAndNicAssignment) {
  const RankedMachine s = setUp(loadFixture(kBridge), 4);
  EXPECT_EQ(localityOrder(s.graph, s.placement), (std::vector<int>{0, 1, 2, 3}));
  const std::vector<int> nics = assignNics(s.graph, s.paths, s.placement);
  EXPECT_EQ(s.graph.node(nics[0]).name, "mlx5_0");
  EXPECT_EQ(s.graph.node(nics[1]).name, "mlx5_0");
  EXPECT_EQ(s.graph.node(nics[2]).name, "mlx5_1");
  EXPECT_EQ(s.graph.node(nics[3]).name, "mlx5_1");
}

}  // namespace
}  // namespace braid::topology
