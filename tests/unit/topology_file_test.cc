// Topology files: every fixture loads whatever its format, braid's format
// round-trips, hosts join into clusters, bad files are refused with their
// line, and this machine's own topology (discovered, and as lstopo wrote it)
// goes through the whole plan.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "topology/braid_xml.h"
#include "topology/discover.h"
#include "topology/plan.h"
#include "topology/summary.h"
#include "unit/topology_fixtures.h"

namespace braid::topology {
namespace {

using testing::fixturePath;
using testing::loadFixture;

// Graphs are the same when the same (host, name) nodes hold the same facts
// and the same links; node order may differ. Bandwidths compare to the
// thousandth braid's format writes.
void expectSameGraph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.hostCount(), b.hostCount());
  auto key = [](const Graph& g, int i) { return std::make_pair(g.node(i).host, g.node(i).name); };
  std::map<std::pair<int, std::string>, int> inB;
  for (int i = 0; i < b.size(); ++i) inB[key(b, i)] = i;
  for (int i = 0; i < a.size(); ++i) {
    const Node& x = a.node(i);
    ASSERT_EQ(inB.count(key(a, i)), 1u) << x.name;
    const Node& y = b.node(inB[key(a, i)]);
    EXPECT_EQ(x.type, y.type) << x.name;
    EXPECT_EQ(x.busId, y.busId) << x.name;
    EXPECT_EQ(x.numaId, y.numaId) << x.name;
    EXPECT_EQ(x.cpuSet, y.cpuSet) << x.name;
    EXPECT_EQ(x.cpuVendor, y.cpuVendor) << x.name;
    EXPECT_EQ(x.cudaDevice, y.cudaDevice) << x.name;
    EXPECT_EQ(x.smVersion, y.smVersion) << x.name;
    EXPECT_NEAR(x.speedGbps, y.speedGbps, 5e-4) << x.name;
    EXPECT_EQ(x.linkLayer, y.linkLayer) << x.name;
    EXPECT_EQ(x.port, y.port) << x.name;
    EXPECT_EQ(x.rdma, y.rdma) << x.name;
    ASSERT_EQ(x.links.size(), y.links.size()) << x.name;
    for (const Link& link : x.links) {
      const Link* other = b.findLink(inB[key(a, i)], inB[key(a, link.to)]);
      ASSERT_NE(other, nullptr) << x.name << " - " << a.node(link.to).name;
      EXPECT_EQ(other->type, link.type);
      EXPECT_NEAR(other->bandwidthGBs, link.bandwidthGBs, 5e-4);
    }
  }
  for (int host = 0; host < a.hostCount(); ++host) EXPECT_EQ(a.hostName(host), b.hostName(host));
}

Graph roundTrip(const Graph& graph) {
  const std::string text = writeBraidXml(graph);
  auto again = parseTopology(text, "written.xml");
  EXPECT_TRUE(again.ok()) << again.status().message() << "\n" << text;
  // Writing what was read gives the same text.
  if (again.ok()) {
    EXPECT_EQ(writeBraidXml(again.value()), text);
  }
  return again.ok() ? std::move(again).value() : Graph();
}

TEST(TopologyFile, EveryFixtureLoads) {
  for (const char* name :
       {testing::kDgx, testing::kPcie4, testing::kPcie4Braid, testing::kBridge,
        testing::kTwoBridgeHosts, testing::kTwoDgxHosts, testing::kBuildMachineHwloc}) {
    auto graph = loadTopologyFile(fixturePath(name));
    ASSERT_TRUE(graph.ok()) << name << ": " << graph.status().message();
    EXPECT_FALSE(graph.value().nodesOfType(NodeType::kCpu).empty()) << name;
  }
}

TEST(TopologyFile, BraidFormatRoundTripsEveryFixture) {
  for (const char* name :
       {testing::kDgx, testing::kPcie4, testing::kBridge, testing::kTwoBridgeHosts,
        testing::kTwoDgxHosts, testing::kBuildMachineHwloc}) {
    SCOPED_TRACE(name);
    const Graph graph = loadFixture(name);
    expectSameGraph(graph, roundTrip(graph));
  }
}

TEST(TopologyFile, NcclAndBraidFilesOfOneMachineAgree) {
  expectSameGraph(loadFixture(testing::kPcie4), loadFixture(testing::kPcie4Braid));
}

TEST(TopologyFile, ClustersKeepTheirHostsAndNetwork) {
  const Graph graph = loadFixture(testing::kTwoDgxHosts);
  EXPECT_EQ(graph.hostCount(), 2);
  EXPECT_EQ(graph.hostName(0), "node-a");
  EXPECT_EQ(graph.hostName(1), "node-b");
  EXPECT_EQ(graph.nodesOfType(NodeType::kGpu, 1).size(), 8u);
  const std::vector<int> nets = graph.nodesOfType(NodeType::kNet);
  ASSERT_EQ(nets.size(), 1u);
  EXPECT_EQ(graph.node(nets[0]).links.size(), 16u);
}

TEST(TopologyFile, NamesThatRepeatGetIds) {
  Graph graph;
  const int cpu = graph.addNode(testing::makeNode(NodeType::kCpu, "cpu"));
  const int a = graph.addNode(testing::makeNode(NodeType::kGpu, "gpu"));
  const int b = graph.addNode(testing::makeNode(NodeType::kGpu, "gpu"));
  const int nameless = graph.addNode(testing::makeNode(NodeType::kNvSwitch, ""));
  graph.connect(cpu, a, LinkType::kPci, 24);
  graph.connect(cpu, b, LinkType::kPci, 12);
  graph.connect(a, nameless, LinkType::kNvLink, 100);
  graph.connect(b, nameless, LinkType::kNvLink, 50);
  graph.setHostName(0, "box <1>");
  const std::string text = writeBraidXml(graph);
  EXPECT_NE(text.find("id="), std::string::npos) << text;
  const Graph again = roundTrip(graph);
  ASSERT_EQ(again.size(), 4);
  EXPECT_EQ(again.hostName(0), "box <1>");
  // The NVSwitch still joins the GPU of the 24 GB/s link with 100 GB/s.
  for (int gpu : again.nodesOfType(NodeType::kGpu)) {
    const int nvs = again.nodesOfType(NodeType::kNvSwitch)[0];
    const double up = again.findLink(gpu, again.nodesOfType(NodeType::kCpu)[0])->bandwidthGBs;
    EXPECT_DOUBLE_EQ(again.findLink(gpu, nvs)->bandwidthGBs, up == 24 ? 100 : 50);
  }
}

TEST(TopologyFile, JoinHostsMakesOneNetwork) {
  const Graph one = loadFixture(testing::kBridge);
  const Graph three = joinHosts({one, one, one});
  EXPECT_EQ(three.hostCount(), 3);
  EXPECT_EQ(three.size(), 3 * one.size() - 2);  // three networks became one
  EXPECT_EQ(three.nodesOfType(NodeType::kNet).size(), 1u);
  EXPECT_EQ(three.hostName(2), "host2");
  const Paths paths(three);
  EXPECT_EQ(paths.type(three.findByName(0, "gpu0"), three.findByName(2, "gpu3")), PathType::kNet);
  // A host whose NICs led nowhere (as discovery leaves plain interfaces) is
  // joined to the network at the NIC's speed, or its PCIe rate.
  const Graph machine = loadFixture(testing::kBuildMachineHwloc);
  const Graph pair = joinHosts({machine, machine});
  const Paths pairPaths(pair);
  EXPECT_EQ(pairPaths.type(pair.findByName(0, "cpu0"), pair.findByName(1, "cpu0")), PathType::kNet);
}

struct BadBraid {
  const char* text;
  int line;
  const char* says;
};

class TopologyFileErrors : public ::testing::TestWithParam<BadBraid> {};

TEST_P(TopologyFileErrors, NameTheFileLineAndProblem) {
  auto graph = parseTopology(GetParam().text, "t.xml");
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), ErrorCode::kInvalidArgument);
  const std::string& message = graph.status().message();
  EXPECT_EQ(message.rfind("t.xml:" + std::to_string(GetParam().line) + ": ", 0), 0u) << message;
  EXPECT_NE(message.find(GetParam().says), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Files, TopologyFileErrors,
    ::testing::Values(
        BadBraid{"<machine/>", 1, "none of <braid-topology>"},
        BadBraid{"<braid-topology version='2'/>", 1, "version 2"},
        BadBraid{"<braid-topology>\n<host><cpu name='c' colour='red'/></host></braid-topology>", 2,
                 "no attribute 'colour'"},
        BadBraid{"<braid-topology>\n<host>\n<cpu name='c'><gpu name='g'/></cpu></host>"
                 "</braid-topology>",
                 3, "needs bw="},
        BadBraid{"<braid-topology><host>\n<cpu name='c'/>\n<cpu name='c'/></host></braid-topology>",
                 3, "'c' names two nodes"},
        BadBraid{"<braid-topology><host><cpu name='c'/>\n<link a='c' b='d' type='SYS' bw='1'/>"
                 "</host></braid-topology>",
                 2, "no node called 'd'"},
        BadBraid{"<braid-topology><host><cpu name='c'/><cpu name='d'/>\n"
                 "<link a='c' b='d' type='UPI' bw='1'/></host></braid-topology>",
                 2, "'UPI' is not a link type"},
        BadBraid{"<braid-topology><host><cpu name='c'/><cpu name='d'/>\n"
                 "<link a='c' b='d' type='SYS' bw='fast'/></host></braid-topology>",
                 2, "bw='fast' is not a bandwidth"},
        BadBraid{"<braid-topology><host name='a'/>\n<link a='b/x' b='net' type='NET' bw='1'/>"
                 "</braid-topology>",
                 2, "no host called 'b'"},
        BadBraid{"<braid-topology><host name='a'/>\n<host name='a'/></braid-topology>", 2,
                 "is taken"},
        BadBraid{"<braid-topology>\n<gpu name='g'/></braid-topology>", 2, "unexpected <gpu>"},
        BadBraid{"<braid-topology><host>\n  <cpu name='c' numa='-2'/></host></braid-topology>", 2,
                 "numa='-2'"},
        BadBraid{"<system>\n<cpu>\n</system>", 3, "does not match <cpu>"}));

TEST(TopologyFile, MissingFileSaysWhich) {
  auto graph = loadTopologyFile("/nonexistent/topo.xml");
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("/nonexistent/topo.xml"), std::string::npos);
}

TEST(TopologyFile, WriteAndObtainThroughFiles) {
  const std::string path = ::testing::TempDir() + "braid_topology_file_test.xml";
  const std::string dump = ::testing::TempDir() + "braid_topology_file_test.dump.xml";
  const Graph graph = loadFixture(testing::kTwoBridgeHosts);
  ASSERT_TRUE(writeTopologyFile(graph, path).ok());
  auto obtained = obtainTopology(path, dump);
  ASSERT_TRUE(obtained.ok()) << obtained.status().message();
  expectSameGraph(graph, obtained.value());
  auto dumped = loadTopologyFile(dump);
  ASSERT_TRUE(dumped.ok()) << dumped.status().message();
  expectSameGraph(graph, dumped.value());
  std::remove(path.c_str());
  std::remove(dump.c_str());
  EXPECT_FALSE(writeTopologyFile(graph, "/nonexistent/dir/x.xml").ok());
}

// This machine has no GPU: discovery still finds its CPUs, and the plan for
// a few ranks on host memory is a ring over shm.
void expectCpuPlan(const Graph& graph) {
  ASSERT_FALSE(graph.nodesOfType(NodeType::kCpu).empty());
  EXPECT_TRUE(graph.nodesOfType(NodeType::kGpu).empty());
  const Paths paths(graph);
  auto placement = placeRanksEvenly(graph, 3);
  ASSERT_TRUE(placement.ok());
  auto plan = planTopology(graph, paths, placement.value(), PlanOptions{});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan.value().transports[0][1], TransportKind::kShm);
  ASSERT_EQ(plan.value().rings.channels.size(), 1u);
  EXPECT_EQ(plan.value().rings.channels[0].order.size(), 3u);
  const std::string summary = summarizeTopology(graph, plan.value());
  EXPECT_NE(summary.find("3 ranks"), std::string::npos) << summary;
  EXPECT_NE(describeMachine(graph).find("cpu"), std::string::npos);
}

TEST(TopologyFile, ThisMachineDiscovered) {
  auto graph = obtainTopology("", "");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  expectCpuPlan(graph.value());
}

TEST(TopologyFile, ThisMachineAsLstopoWroteIt) {
  expectCpuPlan(loadFixture(testing::kBuildMachineHwloc));
}

TEST(TopologyFile, SummaryOfTheDgxFixture) {
  const Graph graph = loadFixture(testing::kDgx);
  const Paths paths(graph);
  auto plan = planTopology(graph, paths, placeRanksEvenly(graph, 8).value(), PlanOptions{});
  ASSERT_TRUE(plan.ok());
  const std::string summary = summarizeTopology(graph, plan.value());
  EXPECT_NE(summary.find("8 GPU on NVSwitch, 8 NIC"), std::string::npos) << summary;
  EXPECT_NE(summary.find("cuda_ipc 56"), std::string::npos) << summary;
  EXPECT_NE(summary.find("order 0 1 2 3 4 5 6 7"), std::string::npos) << summary;
  EXPECT_EQ(summary.find('\n'), std::string::npos) << "one paragraph";
  const std::string text = describePlan(graph, paths, plan.value());
  EXPECT_NE(text.find("channel 0  450 GB/s: 0 1 2 3 4 5 6 7"), std::string::npos) << text;
  const std::string matrices = describePaths(graph, paths);
  EXPECT_NE(matrices.find("gpu0     PIX    PXB    PHB    PHB    SYS"), std::string::npos)
      << matrices;
}

}  // namespace
}  // namespace braid::topology
