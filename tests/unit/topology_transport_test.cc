// The transport of each rank pair: cuda_ipc within the P2P level, shm
// otherwise on one host, net between hosts, and what BRAID_TRANSPORTS and
// BRAID_P2P_LEVEL change.
#include <gtest/gtest.h>

#include "topology/transport_choice.h"
#include "unit/topology_fixtures.h"

namespace braid::topology {
namespace {

using testing::kBridge;
using testing::kDgx;
using testing::kPcie4;
using testing::kTwoBridgeHosts;
using testing::loadFixture;

TransportMatrix transportsFor(const Graph& graph, int nranks, const TransportPolicy& policy) {
  const Paths paths(graph);
  auto placement = placeRanksEvenly(graph, nranks);
  EXPECT_TRUE(placement.ok()) << placement.status().message();
  auto matrix = chooseTransports(graph, paths, placement.value(), policy);
  EXPECT_TRUE(matrix.ok()) << matrix.status().message();
  return matrix.ok() ? matrix.value() : TransportMatrix();
}

constexpr TransportKind kIpc = TransportKind::kCudaIpc;
constexpr TransportKind kShm = TransportKind::kShm;
constexpr TransportKind kNet = TransportKind::kNet;
constexpr TransportKind kNone = TransportKind::kNone;

TEST(TopologyTransport, DgxIsCudaIpcEverywhere) {
  const TransportMatrix m = transportsFor(loadFixture(kDgx), 8, TransportPolicy{});
  ASSERT_EQ(m.size(), 8u);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) EXPECT_EQ(m[a][b], a == b ? kNone : kIpc) << a << "," << b;
  }
}

TEST(TopologyTransport, PcieDefaultLevelStopsAtTheHostBridge) {
  const Graph graph = loadFixture(kPcie4);
  // Intel CPUs: PXB by default, so the GPUs of one switch (PIX) use
  // cuda_ipc and the sockets' GPUs (SYS) talk through host memory.
  EXPECT_EQ(defaultP2pLevel(graph, 0), PathType::kPxb);
  const TransportMatrix m = transportsFor(graph, 4, TransportPolicy{});
  EXPECT_EQ(m[0][1], kIpc);
  EXPECT_EQ(m[3][2], kIpc);
  EXPECT_EQ(m[0][2], kShm);
  EXPECT_EQ(m[1][3], kShm);
  EXPECT_EQ(m[3][0], kShm);
}

TEST(TopologyTransport, P2pLevelMovesTheCutoff) {
  const Graph graph = loadFixture(kBridge);
  TransportPolicy policy;
  const TransportMatrix byDefault = transportsFor(graph, 4, policy);
  EXPECT_EQ(byDefault[0][1], kIpc);  // NVL
  EXPECT_EQ(byDefault[2][3], kShm);  // PHB, beyond PXB
  EXPECT_EQ(byDefault[0][2], kShm);  // SYS

  policy.p2pLevel = PathType::kPhb;
  const TransportMatrix phb = transportsFor(graph, 4, policy);
  EXPECT_EQ(phb[2][3], kIpc);
  EXPECT_EQ(phb[0][2], kShm);

  policy.p2pLevel = PathType::kSys;
  const TransportMatrix sys = transportsFor(graph, 4, policy);
  EXPECT_EQ(sys[0][2], kIpc);
  EXPECT_EQ(sys[3][1], kIpc);

  policy.p2pLevel = PathType::kNvl;
  const TransportMatrix nvl = transportsFor(graph, 4, policy);
  EXPECT_EQ(nvl[0][1], kIpc);
  EXPECT_EQ(nvl[2][3], kShm);

  policy.p2pLevel = PathType::kLoc;  // NCCL_P2P_LEVEL=LOC: never
  const TransportMatrix never = transportsFor(graph, 4, policy);
  EXPECT_EQ(never[0][1], kShm);
}

TEST(TopologyTransport, AmdCpusDefaultToSys) {
  Graph graph = loadFixture(kPcie4);
  for (int cpu : graph.nodesOfType(NodeType::kCpu)) graph.node(cpu).cpuVendor = "AuthenticAMD";
  EXPECT_EQ(defaultP2pLevel(graph, 0), PathType::kSys);
  EXPECT_EQ(transportsFor(graph, 4, TransportPolicy{})[0][2], kIpc);
}

TEST(TopologyTransport, PeerAccessIsRequired) {
  TransportPolicy policy;
  policy.canAccessPeer = [](int, int) { return false; };
  const TransportMatrix m = transportsFor(loadFixture(kDgx), 8, policy);
  EXPECT_EQ(m[0][1], kShm);
}

TEST(TopologyTransport, RanksSharingAGpuUseCudaIpc) {
  const TransportMatrix m = transportsFor(loadFixture(kPcie4), 8, TransportPolicy{});
  EXPECT_EQ(m[0][1], kIpc);  // both on GPU 0
  EXPECT_EQ(m[1][2], kIpc);  // GPU 0 and GPU 1: PIX
  EXPECT_EQ(m[0][4], kShm);  // across the sockets
}

TEST(TopologyTransport, HostsTalkOverTheNetwork) {
  const TransportMatrix m = transportsFor(loadFixture(kTwoBridgeHosts), 8, TransportPolicy{});
  EXPECT_EQ(m[0][1], kIpc);
  EXPECT_EQ(m[0][2], kShm);
  for (int a = 0; a < 4; ++a) {
    for (int b = 4; b < 8; ++b) {
      EXPECT_EQ(m[a][b], kNet);
      EXPECT_EQ(m[b][a], kNet);
    }
  }
}

TEST(TopologyTransport, CpuRanksUseShm) {
  Graph graph;
  const int cpu0 = graph.addNode(testing::makeNode(NodeType::kCpu, "cpu0"));
  const int cpu1 = graph.addNode(testing::makeNode(NodeType::kCpu, "cpu1"));
  graph.connect(cpu0, cpu1, LinkType::kSys, 10);
  const TransportMatrix m = transportsFor(graph, 4, TransportPolicy{});
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) EXPECT_EQ(m[a][b], a == b ? kNone : kShm);
  }
}

TEST(TopologyTransport, AllowListRestrictsAndFallsBack) {
  const Graph graph = loadFixture(kTwoBridgeHosts);
  TransportPolicy policy;
  policy.allowed = TransportSet::parse("shm,net").value();
  const TransportMatrix noIpc = transportsFor(graph, 8, policy);
  EXPECT_EQ(noIpc[0][1], kShm);
  EXPECT_EQ(noIpc[0][4], kNet);

  policy.allowed = TransportSet::parse("net").value();
  const TransportMatrix onlyNet = transportsFor(graph, 8, policy);
  EXPECT_EQ(onlyNet[0][1], kNet);  // over the loopback

  policy.allowed = TransportSet::parse("cuda_ipc,shm").value();
  const Paths paths(graph);
  const Placement placement = placeRanksEvenly(graph, 8).value();
  auto refused = chooseTransports(graph, paths, placement, policy);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidUsage);
  EXPECT_NE(refused.status().message().find("different hosts"), std::string::npos)
      << refused.status().message();

  policy.allowed = TransportSet::parse("cuda_ipc").value();
  auto beyond = chooseTransport(graph, paths, placement, 0, 2, policy);
  ASSERT_FALSE(beyond.ok());
  EXPECT_NE(beyond.status().message().find("SYS apart, beyond the P2P level PXB"),
            std::string::npos)
      << beyond.status().message();
  EXPECT_EQ(chooseTransport(graph, paths, placement, 0, 1, policy).value(), kIpc);
}

TEST(TopologyTransport, AllowListSyntax) {
  EXPECT_EQ(TransportSet::parse("").value().describe(), "cuda_ipc,shm,net");
  EXPECT_EQ(TransportSet::parse(" shm , cuda_ipc ").value().describe(), "cuda_ipc,shm");
  EXPECT_EQ(TransportSet::parse("socket").value().describe(), "net");
  EXPECT_EQ(TransportSet::parse("ibverbs,shm").value().describe(), "shm,net");
  auto bad = TransportSet::parse("shm,nvlink");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'nvlink'"), std::string::npos);
}

}  // namespace
}  // namespace braid::topology
