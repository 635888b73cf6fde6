// Path types and bottleneck bandwidths on the fixtures and on small graphs
// built for one rule each.
#include <gtest/gtest.h>

#include <cmath>

#include "topology/paths.h"
#include "unit/topology_fixtures.h"

namespace braid::topology {
namespace {

using testing::kBridge;
using testing::kDgx;
using testing::kPcie4;
using testing::kTwoBridgeHosts;
using testing::loadFixture;
using testing::nodeNamed;

PathType typeBetween(const Graph& graph, const Paths& paths, const std::string& a,
                     const std::string& b, int hostA = 0, int hostB = 0) {
  return paths.type(nodeNamed(graph, a, hostA), nodeNamed(graph, b, hostB));
}

double bandwidthBetween(const Graph& graph, const Paths& paths, const std::string& a,
                        const std::string& b) {
  return paths.bandwidthGBs(nodeNamed(graph, a), nodeNamed(graph, b));
}

TEST(TopologyPaths, DgxGpusAreAllNvlinkAndNicsByDistance) {
  const Graph graph = loadFixture(kDgx);
  const Paths paths(graph);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      const std::string ga = "gpu" + std::to_string(a);
      const std::string gb = "gpu" + std::to_string(b);
      EXPECT_EQ(typeBetween(graph, paths, ga, gb), a == b ? PathType::kLoc : PathType::kNvl);
      if (a != b) {
        EXPECT_DOUBLE_EQ(bandwidthBetween(graph, paths, ga, gb), 450);
      }
    }
  }
  // GPU 0 shares a leaf switch with mlx5_0, a top switch with mlx5_1, a CPU
  // with mlx5_2 and mlx5_3, and nothing but the socket link with the rest.
  EXPECT_EQ(typeBetween(graph, paths, "gpu0", "mlx5_0"), PathType::kPix);
  EXPECT_EQ(typeBetween(graph, paths, "gpu0", "mlx5_1"), PathType::kPxb);
  EXPECT_EQ(typeBetween(graph, paths, "gpu0", "mlx5_2"), PathType::kPhb);
  EXPECT_EQ(typeBetween(graph, paths, "gpu0", "mlx5_3"), PathType::kPhb);
  for (int nic = 4; nic < 8; ++nic) {
    EXPECT_EQ(typeBetween(graph, paths, "gpu0", "mlx5_" + std::to_string(nic)), PathType::kSys);
  }
  EXPECT_EQ(typeBetween(graph, paths, "gpu7", "mlx5_7"), PathType::kPix);
  EXPECT_NEAR(bandwidthBetween(graph, paths, "gpu0", "mlx5_0"), 63.02, 0.01);
  EXPECT_DOUBLE_EQ(bandwidthBetween(graph, paths, "gpu0", "mlx5_4"), 10);
  EXPECT_EQ(typeBetween(graph, paths, "cpu0", "mlx5_0"), PathType::kPhb);
  EXPECT_EQ(typeBetween(graph, paths, "cpu1", "mlx5_0"), PathType::kSys);
  // The best path between GPUs goes through the NVSwitch, not over PCIe.
  const Path& path = paths.between(nodeNamed(graph, "gpu0"), nodeNamed(graph, "gpu7"));
  ASSERT_EQ(path.nodes.size(), 3u);
  EXPECT_EQ(graph.node(path.nodes[1]).type, NodeType::kNvSwitch);
}

TEST(TopologyPaths, PcieGpusBySwitchAndSocket) {
  const Graph graph = loadFixture(kPcie4);
  const Paths paths(graph);
  EXPECT_EQ(typeBetween(graph, paths, "gpu0", "gpu1"), PathType::kPix);
  EXPECT_EQ(typeBetween(graph, paths, "gpu2", "gpu3"), PathType::kPix);
  EXPECT_EQ(typeBetween(graph, paths, "gpu0", "gpu2"), PathType::kSys);
  EXPECT_EQ(typeBetween(graph, paths, "gpu1", "gpu3"), PathType::kSys);
  EXPECT_NEAR(bandwidthBetween(graph, paths, "gpu0", "gpu1"), 31.5, 0.01);
  EXPECT_DOUBLE_EQ(bandwidthBetween(graph, paths, "gpu0", "gpu3"), 10);
  EXPECT_EQ(typeBetween(graph, paths, "gpu0", "mlx5_0"), PathType::kPhb);
  EXPECT_EQ(typeBetween(graph, paths, "gpu3", "mlx5_0"), PathType::kSys);
  EXPECT_EQ(paths.between(nodeNamed(graph, "gpu0"), nodeNamed(graph, "gpu1")).hops(), 2);
}

TEST(TopologyPaths, NvlinkBridgePairAndTheRest) {
  const Graph graph = loadFixture(kBridge);
  const Paths paths(graph);
  EXPECT_EQ(typeBetween(graph, paths, "gpu0", "gpu1"), PathType::kNvl);
  EXPECT_DOUBLE_EQ(bandwidthBetween(graph, paths, "gpu0", "gpu1"), 56.25);
  EXPECT_EQ(typeBetween(graph, paths, "gpu0", "gpu2"), PathType::kSys);
  EXPECT_EQ(typeBetween(graph, paths, "gpu1", "gpu3"), PathType::kSys);
  EXPECT_EQ(typeBetween(graph, paths, "gpu2", "gpu3"), PathType::kPhb);
  EXPECT_EQ(typeBetween(graph, paths, "gpu0", "mlx5_0"), PathType::kPix);
  EXPECT_EQ(typeBetween(graph, paths, "gpu2", "mlx5_1"), PathType::kPhb);
  EXPECT_EQ(typeBetween(graph, paths, "gpu2", "mlx5_0"), PathType::kSys);
}

TEST(TopologyPaths, AcrossHostsIsNet) {
  const Graph graph = loadFixture(kTwoBridgeHosts);
  ASSERT_EQ(graph.hostCount(), 2);
  const Paths paths(graph);
  EXPECT_EQ(typeBetween(graph, paths, "gpu0", "gpu0", 0, 1), PathType::kNet);
  EXPECT_EQ(typeBetween(graph, paths, "gpu0", "gpu1", 0, 0), PathType::kNvl);
  // GPU, PCIe switch, mlx5_0, network, mlx5_0, PCIe switch, GPU: the NICs'
  // 25 GB/s is the bottleneck.
  const Path& path = paths.between(nodeNamed(graph, "gpu0", 0), nodeNamed(graph, "gpu0", 1));
  EXPECT_DOUBLE_EQ(path.bandwidthGBs, 25);
  EXPECT_EQ(path.hops(), 6);
}

// A chain of three GPUs joined by NVLink bridges, all on one PCIe switch:
// the ends reach each other through the middle GPU (NVB), which beats PCIe.
TEST(TopologyPaths, NvlinkThroughAGpuIsNvb) {
  Graph graph;
  const int cpu = graph.addNode(testing::makeNode(NodeType::kCpu, "cpu0"));
  const int pci = graph.addNode(testing::makeNode(NodeType::kPciSwitch, "sw"));
  graph.connect(cpu, pci, LinkType::kPci, 16);
  int gpus[3];
  for (int i = 0; i < 3; ++i) {
    gpus[i] = graph.addNode(testing::makeNode(NodeType::kGpu, "gpu" + std::to_string(i)));
    graph.connect(pci, gpus[i], LinkType::kPci, 16);
  }
  graph.connect(gpus[0], gpus[1], LinkType::kNvLink, 50);
  graph.connect(gpus[1], gpus[2], LinkType::kNvLink, 100);
  const Paths paths(graph);
  EXPECT_EQ(paths.type(gpus[0], gpus[1]), PathType::kNvl);
  EXPECT_EQ(paths.type(gpus[0], gpus[2]), PathType::kNvb);
  EXPECT_DOUBLE_EQ(paths.bandwidthGBs(gpus[0], gpus[2]), 50);
  EXPECT_EQ(paths.between(gpus[0], gpus[2]).nodes, (std::vector<int>{gpus[0], gpus[1], gpus[2]}));
  // A GPU relays NVLink only: from the CPU, GPU 2 is reached over PCIe.
  EXPECT_EQ(paths.type(cpu, gpus[2]), PathType::kPhb);
  EXPECT_EQ(paths.between(cpu, gpus[2]).hops(), 2);
}

// Discovery lists an RDMA adapter as its verbs port and its network
// interface on the same PCI function; the nearest NIC is the port, once.
TEST(TopologyPaths, OnAHostWithRdmaPortsOnlyThePortsAreNics) {
  Graph graph;
  const int cpu = graph.addNode(testing::makeNode(NodeType::kCpu, "cpu0"));
  const int sw = graph.addNode(testing::makeNode(NodeType::kPciSwitch, "sw"));
  graph.connect(cpu, sw, LinkType::kPci, 32);
  const int gpu = graph.addNode(testing::makeNode(NodeType::kGpu, "gpu0"));
  graph.connect(sw, gpu, LinkType::kPci, 32);
  Node port = testing::makeNode(NodeType::kNic, "mlx5_0:1");
  port.busId = "0000:18:00.0";
  port.rdma = true;
  const int portNode = graph.addNode(port);
  graph.connect(sw, portNode, LinkType::kPci, 32);
  Node netdev = testing::makeNode(NodeType::kNic, "ib0");
  netdev.busId = "0000:18:00.0";
  const int netdevNode = graph.addNode(netdev);
  graph.connect(sw, netdevNode, LinkType::kPci, 32);
  Node other = testing::makeNode(NodeType::kNic, "eth0");
  other.busId = "0000:19:00.0";
  const int otherNode = graph.addNode(other);
  graph.connect(sw, otherNode, LinkType::kPci, 32);
  const Paths paths(graph);
  // The adapter's own interface (ib0) counts it twice, and the verbs transport carries the
  // traffic of a host with RDMA ports: plain interfaces (eth0 too) are not NICs to plan on.
  EXPECT_EQ(nearestNics(graph, paths, gpu), (std::vector<int>{portNode}));
  // Without an RDMA port, the plain interfaces are the NICs.
  graph.node(portNode).rdma = false;
  graph.node(portNode).busId = "0000:1a:00.0";
  const Paths plain(graph);
  EXPECT_EQ(nearestNics(graph, plain, gpu), (std::vector<int>{portNode, netdevNode, otherNode}));
}

// Two switches below one (nested), and one GPU on a root port: PXB within
// the nested tree, PHB through the CPU.
TEST(TopologyPaths, NestedSwitchesArePxb) {
  Graph graph;
  const int cpu = graph.addNode(testing::makeNode(NodeType::kCpu, "cpu0"));
  const int top = graph.addNode(testing::makeNode(NodeType::kPciSwitch, "top"));
  const int left = graph.addNode(testing::makeNode(NodeType::kPciSwitch, "left"));
  const int right = graph.addNode(testing::makeNode(NodeType::kPciSwitch, "right"));
  graph.connect(cpu, top, LinkType::kPci, 32);
  graph.connect(top, left, LinkType::kPci, 32);
  graph.connect(top, right, LinkType::kPci, 16);
  const int a = graph.addNode(testing::makeNode(NodeType::kGpu, "a"));
  const int b = graph.addNode(testing::makeNode(NodeType::kGpu, "b"));
  const int c = graph.addNode(testing::makeNode(NodeType::kGpu, "c"));
  graph.connect(left, a, LinkType::kPci, 32);
  graph.connect(right, b, LinkType::kPci, 32);
  graph.connect(cpu, c, LinkType::kPci, 32);
  const Paths paths(graph);
  EXPECT_EQ(paths.type(a, b), PathType::kPxb);
  EXPECT_DOUBLE_EQ(paths.bandwidthGBs(a, b), 16);
  EXPECT_EQ(paths.type(a, c), PathType::kPhb);
  EXPECT_EQ(paths.type(a, a), PathType::kLoc);
  EXPECT_TRUE(std::isinf(paths.bandwidthGBs(a, a)));
  const int lonely = graph.addNode(testing::makeNode(NodeType::kGpu, "lonely"));
  const Paths more(graph);
  EXPECT_EQ(more.type(a, lonely), PathType::kDis);
  EXPECT_TRUE(more.between(a, lonely).nodes.empty());
}

TEST(TopologyPaths, NearestNics) {
  const Graph dgx = loadFixture(kDgx);
  const Paths dgxPaths(dgx);
  for (int i = 0; i < 8; ++i) {
    const std::vector<int> nearest =
        nearestNics(dgx, dgxPaths, nodeNamed(dgx, "gpu" + std::to_string(i)));
    ASSERT_EQ(nearest.size(), 1u);
    EXPECT_EQ(dgx.node(nearest[0]).name, "mlx5_" + std::to_string(i));
  }
  // Both GPUs of the bridged pair are a switch away from mlx5_0: a tie.
  const Graph bridge = loadFixture(kBridge);
  const Paths bridgePaths(bridge);
  EXPECT_EQ(nearestNics(bridge, bridgePaths, nodeNamed(bridge, "gpu1")),
            std::vector<int>{nodeNamed(bridge, "mlx5_0")});
  EXPECT_EQ(nearestNics(bridge, bridgePaths, nodeNamed(bridge, "gpu3")),
            std::vector<int>{nodeNamed(bridge, "mlx5_1")});
  // A CPU's nearest NIC hangs off the CPU itself.
  EXPECT_EQ(nearestNics(bridge, bridgePaths, nodeNamed(bridge, "cpu1")),
            std::vector<int>{nodeNamed(bridge, "mlx5_1")});
}

TEST(TopologyPaths, PathTypeNamesParse) {
  EXPECT_EQ(parsePathType("PIX").value(), PathType::kPix);
  EXPECT_EQ(parsePathType("sys").value(), PathType::kSys);
  EXPECT_EQ(parsePathType("Nvl").value(), PathType::kNvl);
  EXPECT_EQ(parsePathType("NVB").value(), PathType::kNvb);
  // NCCL's legacy numbers: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS, more is SYS.
  EXPECT_EQ(parsePathType("0").value(), PathType::kLoc);
  EXPECT_EQ(parsePathType("1").value(), PathType::kPix);
  EXPECT_EQ(parsePathType("2").value(), PathType::kPxb);
  EXPECT_EQ(parsePathType("3").value(), PathType::kPhb);
  EXPECT_EQ(parsePathType("4").value(), PathType::kSys);
  EXPECT_EQ(parsePathType("7").value(), PathType::kSys);
  EXPECT_FALSE(parsePathType("").ok());
  EXPECT_FALSE(parsePathType("-1").ok());
  EXPECT_FALSE(parsePathType("PCI").ok());
  EXPECT_NE(parsePathType("near").status().message().find("'near'"), std::string::npos);
  for (int t = 0; t < kNumPathTypes; ++t) {
    const auto type = static_cast<PathType>(t);
    EXPECT_EQ(parsePathType(pathTypeName(type)).value(), type);
  }
}

}  // namespace
}  // namespace braid::topology
