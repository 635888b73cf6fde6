// Point-to-point routes between hosts (topology/net_routes.h) on synthetic machines: NCCL's
// 8-GPU 8-NIC host twice (every GPU on the NVSwitch, each beside its NIC), and the NVLink-bridge
// host twice (GPUs bridged in pairs, a NIC per socket); and BRAID_IB_HCA's storage NIC kept out
// of every plan (discover.h leaveOutRdmaPorts).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topology/discover.h"
#include "topology/net_routes.h"
#include "topology/search.h"
#include "transport/net/ib/hca_filter.h"
#include "unit/topology_fixtures.h"

namespace braid::topology {
namespace {

struct Machine {
  Graph graph;
  Paths paths;
  Placement placement;
  std::vector<int> rankNics;
};

Machine machine(const char* fixture, int nranks) {
  Machine m;
  m.graph = testing::loadFixture(fixture);
  m.paths = Paths(m.graph);
  auto placement = placeRanksEvenly(m.graph, nranks);
  EXPECT_TRUE(placement.ok()) << placement.status().message();
  if (placement.ok()) m.placement = placement.value();
  m.rankNics = assignNics(m.graph, m.paths, m.placement);
  return m;
}

P2pNetRoute route(const Machine& m, int from, int to, int crossNic, int pxnLevel) {
  P2pNetOptions options;
  options.crossNic = crossNic;
  options.pxnLevel = pxnLevel;
  return p2pSendRoute(m.graph, m.paths, m.placement, m.rankNics, from, to, options);
}

std::string nicName(const Machine& m, const P2pNetRoute& r) {
  return r.nic < 0 ? "none" : m.graph.node(r.nic).name;
}

TEST(P2pNetRoutes, EachRankOfAnEightNicHostHasItsOwnNic) {
  const Machine m = machine(testing::kTwoDgxHosts, 16);
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(m.graph.node(m.rankNics[r]).name, "mlx5_" + std::to_string(r % 8)) << "rank " << r;
  }
}

TEST(P2pNetRoutes, PxnSendsOnThePeersRailThroughItsNvlinkNeighbour) {
  const Machine m = machine(testing::kTwoDgxHosts, 16);
  // Rank 0 (gpu0 of host 0) to rank 11 (gpu3 of host 1): NCCL's defaults (CROSS_NIC 2, PXN level
  // 2) take rail 3, relayed by rank 3, whose GPU is beside mlx5_3 and on the NVSwitch with gpu0.
  P2pNetRoute r = route(m, 0, 11, 2, 2);
  EXPECT_EQ(nicName(m, r), "mlx5_3");
  EXPECT_EQ(r.relayRank, 3);
  EXPECT_TRUE(r.railOfPeer);
  EXPECT_EQ(describeRoute(r), "(the peer's rail; PXN relay: rank 3)");
  // The peer of the same index is on the sender's own rail: nothing to relay.
  r = route(m, 0, 8, 2, 2);
  EXPECT_EQ(nicName(m, r), "mlx5_0");
  EXPECT_EQ(r.relayRank, -1);
  EXPECT_EQ(describeRoute(r), "(nearest)");
  // Level 1 relays only where the sender's own way to that NIC is worse than PXB: here gpu0
  // reaches mlx5_3 through the host bridge at best.
  ASSERT_GT(m.paths.type(m.placement[0].device, m.rankNics[3]), PathType::kPxb);
  EXPECT_EQ(route(m, 0, 11, 2, 1).relayRank, 3);
}

TEST(P2pNetRoutes, WithoutPxnTheSenderKeepsItsNicUnlessRailsMayNotBeCrossed) {
  const Machine m = machine(testing::kTwoDgxHosts, 16);
  // NCCL_PXN_DISABLE=1 (level 0), CROSS_NIC 2: its own NIC.
  P2pNetRoute r = route(m, 0, 11, 2, 0);
  EXPECT_EQ(nicName(m, r), "mlx5_0");
  EXPECT_EQ(r.relayRank, -1);
  EXPECT_FALSE(r.railOfPeer);
  // CROSS_NIC 0: the peer's rail, straight from the sender (no relay).
  r = route(m, 0, 11, 0, 0);
  EXPECT_EQ(nicName(m, r), "mlx5_3");
  EXPECT_EQ(r.relayRank, -1);
  EXPECT_EQ(describeRoute(r), "(the peer's rail)");
  // CROSS_NIC 1 with PXN: PXN still chooses the rail.
  EXPECT_EQ(nicName(m, route(m, 0, 11, 1, 2)), "mlx5_3");
}

TEST(P2pNetRoutes, NoRelayWithoutNvlinkToTheGpuBesideThePeersRail) {
  // Bridged pairs: gpu0 and gpu1 share mlx5_0, gpu2 and gpu3 mlx5_1, no NVLink between pairs.
  const Machine m = machine(testing::kTwoBridgeHosts, 8);
  ASSERT_EQ(m.graph.node(m.rankNics[2]).name, "mlx5_1");
  // Rank 0 to rank 6 (gpu2 of host 1): its rail's GPU is not NVLinked to gpu0, so PXN cannot
  // relay and the sender keeps mlx5_0; with CROSS_NIC 0 it must take mlx5_1 itself.
  P2pNetRoute r = route(m, 0, 6, 2, 2);
  EXPECT_EQ(nicName(m, r), "mlx5_0");
  EXPECT_EQ(r.relayRank, -1);
  r = route(m, 0, 6, 0, 2);
  EXPECT_EQ(nicName(m, r), "mlx5_1");
  EXPECT_EQ(r.relayRank, -1);
  // Rank 1 (gpu1) to rank 4 (gpu0 of host 1): gpu0, beside mlx5_0, is its NVLink neighbour, but
  // mlx5_0 is rank 1's own NIC already.
  r = route(m, 1, 4, 2, 2);
  EXPECT_EQ(nicName(m, r), "mlx5_0");
  EXPECT_EQ(r.relayRank, -1);
}

TEST(P2pNetRoutes, RanksOnHostMemoryKeepTheirOwnNic) {
  Machine m = machine(testing::kTwoDgxHosts, 16);
  // Every rank on its host's first CPU instead of a GPU: no GPU index, no rail to seek.
  for (RankPlace& place : m.placement) {
    place.device = m.graph.nodesOfType(NodeType::kCpu, place.host).front();
  }
  m.rankNics = assignNics(m.graph, m.paths, m.placement);
  const P2pNetRoute r = route(m, 0, 11, 0, 2);
  EXPECT_EQ(r.nic, m.rankNics[0]);
  EXPECT_EQ(r.relayRank, -1);
  EXPECT_FALSE(r.railOfPeer);
}

TEST(P2pNetRoutes, AStorageNicLeftOutByIbHcaIsNeverPlannedOn) {
  Machine m = machine(testing::kTwoDgxHosts, 16);
  const transport::ib::HcaFilter filter("^mlx5_3");
  const auto allowed = [&](const std::string& device, int port) {
    return filter.allows(device, port);
  };
  EXPECT_EQ(leaveOutRdmaPorts(m.graph, 0, allowed), std::vector<std::string>{"mlx5_3"});
  EXPECT_TRUE(leaveOutRdmaPorts(m.graph, 0, allowed).empty());  // once only
  m.paths = Paths(m.graph);
  m.rankNics = assignNics(m.graph, m.paths, m.placement);
  // gpu3 of host 0 takes another NIC; host 1, whose filter was not applied here, keeps its own.
  EXPECT_NE(m.graph.node(m.rankNics[3]).name, "mlx5_3");
  EXPECT_EQ(m.graph.node(m.rankNics[11]).name, "mlx5_3");
  auto rings = searchRings(m.graph, m.paths, m.placement, SearchOptions{});
  ASSERT_TRUE(rings.ok()) << rings.status().message();
  for (const Ring& ring : rings.value().channels) {
    for (const NetHop& hop : ring.netHops) {
      EXPECT_FALSE(m.graph.node(hop.sendNic).host == 0 &&
                   m.graph.node(hop.sendNic).name == "mlx5_3");
      EXPECT_FALSE(m.graph.node(hop.recvNic).host == 0 &&
                   m.graph.node(hop.recvNic).name == "mlx5_3");
    }
  }
  // From host 0, no route leaves by it either.
  for (int to = 8; to < 16; ++to) {
    EXPECT_NE(nicName(m, route(m, 3, to, 2, 2)), "mlx5_3") << "to rank " << to;
  }
}

}  // namespace
}  // namespace braid::topology
