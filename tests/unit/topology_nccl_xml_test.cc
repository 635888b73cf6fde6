// NCCL's topology format (NCCL_TOPO_FILE): the fixtures become the graphs
// they describe, devices are recognised by class and vendor, and bad files
// are refused with their line.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "topology/nccl_xml.h"
#include "unit/topology_fixtures.h"

namespace braid::topology {
namespace {

using testing::kBridge;
using testing::kDgx;
using testing::kPcie4;
using testing::loadFixture;
using testing::nodeNamed;

// A document in NCCL's format, through the parser braid loads files with.
Result<Graph> ncclGraph(const std::string& text, const std::string& source) {
  BRAID_ASSIGN_OR_RETURN(const std::unique_ptr<XmlDocument> document,
                         XmlDocument::parse(text, source));
  return graphFromNcclXml(*document);
}

TEST(TopologyNcclXml, DgxLikeHostHasItsDevices) {
  const Graph graph = loadFixture(kDgx);
  EXPECT_EQ(graph.hostCount(), 1);
  EXPECT_EQ(graph.nodesOfType(NodeType::kCpu).size(), 2u);
  EXPECT_EQ(graph.nodesOfType(NodeType::kGpu).size(), 8u);
  EXPECT_EQ(graph.nodesOfType(NodeType::kNic).size(), 8u);
  EXPECT_EQ(graph.nodesOfType(NodeType::kNvSwitch).size(), 1u);
  EXPECT_EQ(graph.nodesOfType(NodeType::kNet).size(), 1u);
  // 4 switches under the CPUs, 2 leaves under each; the bridge that leads
  // only to the BMC's VGA device is gone, and so are the VGA and the NVMe.
  EXPECT_EQ(graph.nodesOfType(NodeType::kPciSwitch).size(), 12u);
  EXPECT_EQ(graph.findByBusId(0, "0000:03:00.0"), -1);
  EXPECT_EQ(graph.findByBusId(0, "0000:00:1c.0"), -1);
  EXPECT_EQ(graph.findByBusId(0, "0000:17:00.0"), -1);

  const Node& cpu0 = graph.node(nodeNamed(graph, "cpu0"));
  EXPECT_EQ(cpu0.numaId, 0);
  EXPECT_EQ(cpu0.cpuSet, "0-55,112-167");
  EXPECT_EQ(cpu0.cpuVendor, "GenuineIntel");
  EXPECT_EQ(graph.node(nodeNamed(graph, "cpu1")).cpuSet, "56-111,168-223");

  const int gpu5 = nodeNamed(graph, "gpu5");
  EXPECT_EQ(graph.node(gpu5).busId, "0000:c3:00.0");
  EXPECT_EQ(graph.node(gpu5).cudaDevice, 5);
  EXPECT_EQ(graph.node(gpu5).smVersion, 90);
  const Node& nic = graph.node(nodeNamed(graph, "mlx5_5"));
  EXPECT_EQ(nic.busId, "0000:c0:00.0");
  EXPECT_DOUBLE_EQ(nic.speedGbps, 400);
  EXPECT_EQ(nic.linkLayer, "InfiniBand");
  EXPECT_TRUE(nic.rdma);
  EXPECT_EQ(nic.port, 1);

  // 18 NVLinks of 25 GB/s to the NVSwitch (5+4+4+5 over four chips), PCIe
  // Gen5 x16 up, NDR to the network, 10 GB/s between the Intel sockets.
  const int nvswitch = graph.nodesOfType(NodeType::kNvSwitch)[0];
  ASSERT_NE(graph.findLink(gpu5, nvswitch), nullptr);
  EXPECT_DOUBLE_EQ(graph.findLink(gpu5, nvswitch)->bandwidthGBs, 450);
  EXPECT_EQ(graph.findLink(gpu5, nvswitch)->type, LinkType::kNvLink);
  const int leaf = graph.findByBusId(0, "0000:98:01.0");
  ASSERT_NE(graph.findLink(gpu5, leaf), nullptr);
  EXPECT_NEAR(graph.findLink(gpu5, leaf)->bandwidthGBs, 63.02, 0.01);
  const int net = graph.nodesOfType(NodeType::kNet)[0];
  EXPECT_EQ(graph.node(net).host, -1);
  EXPECT_DOUBLE_EQ(graph.findLink(nodeNamed(graph, "mlx5_5"), net)->bandwidthGBs, 50);
  EXPECT_DOUBLE_EQ(graph.findLink(nodeNamed(graph, "cpu0"), nodeNamed(graph, "cpu1"))->bandwidthGBs,
                   10);
}

TEST(TopologyNcclXml, VendorStyleFileWithBarePciDevices) {
  const Graph graph = loadFixture(kPcie4);
  // The GPUs carry no <gpu>: class 0x0302 from NVIDIA makes them GPUs,
  // numbered in bus id order; the ASPEED VGA (class 0x0300) is no GPU.
  const std::vector<int> gpus = graph.nodesOfType(NodeType::kGpu);
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(graph.node(nodeNamed(graph, "gpu0")).busId, "0000:1a:00.0");
  EXPECT_EQ(graph.node(nodeNamed(graph, "gpu3")).busId, "0000:8b:00.0");
  EXPECT_EQ(graph.node(nodeNamed(graph, "gpu3")).cudaDevice, 3);
  EXPECT_EQ(graph.findByBusId(0, "0000:02:00.0"), -1);
  // One RoCE port: Ethernet, but RDMA-capable (a Mellanox device).
  const std::vector<int> nics = graph.nodesOfType(NodeType::kNic);
  ASSERT_EQ(nics.size(), 1u);
  EXPECT_EQ(graph.node(nics[0]).name, "mlx5_0");
  EXPECT_EQ(graph.node(nics[0]).linkLayer, "Ethernet");
  EXPECT_TRUE(graph.node(nics[0]).rdma);
  EXPECT_TRUE(graph.nodesOfType(NodeType::kNvSwitch).empty());
}

TEST(TopologyNcclXml, NvlinkBridgeCountsOncePerPair) {
  const Graph graph = loadFixture(kBridge);
  const Link* bridge = graph.findLink(nodeNamed(graph, "gpu0"), nodeNamed(graph, "gpu1"));
  ASSERT_NE(bridge, nullptr);
  EXPECT_EQ(bridge->type, LinkType::kNvLink);
  EXPECT_DOUBLE_EQ(bridge->bandwidthGBs, 4 * 14.0625);  // GA102: 4 links, not 8
  EXPECT_EQ(graph.findLink(nodeNamed(graph, "gpu2"), nodeNamed(graph, "gpu3")), nullptr);
}

TEST(TopologyNcclXml, NicWithoutPortsAndNicOffTheCpu) {
  auto graph = ncclGraph(
      "<system version='1'>\n"
      "  <cpu numaid='0' affinity='0000000f' vendor='AuthenticAMD'>\n"
      "    <pci busid='0001:00:00.0' class='0x020700' link_speed='16 GT/s' link_width='16'/>\n"
      "    <nic><net name='eth0' speed='25000' port='0'/></nic>\n"
      "  </cpu>\n"
      "</system>\n",
      "t.xml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  const std::vector<int> nics = graph.value().nodesOfType(NodeType::kNic);
  ASSERT_EQ(nics.size(), 2u);
  const Node& bare = graph.value().node(nics[0]);
  EXPECT_EQ(bare.busId, "0001:00:00.0");
  EXPECT_EQ(bare.linkLayer, "InfiniBand");
  EXPECT_TRUE(bare.rdma);
  const Node& eth = graph.value().node(nics[1]);
  EXPECT_EQ(eth.name, "eth0");
  EXPECT_FALSE(eth.rdma);
  EXPECT_DOUBLE_EQ(eth.speedGbps, 25);
  // The bare NIC's speed is unknown: the network link takes its PCIe rate.
  const int net = graph.value().nodesOfType(NodeType::kNet)[0];
  EXPECT_NEAR(graph.value().findLink(nics[0], net)->bandwidthGBs, 31.5, 0.01);
  EXPECT_DOUBLE_EQ(graph.value().findLink(nics[1], net)->bandwidthGBs, 25.0 / 8);
  EXPECT_EQ(graph.value().node(graph.value().nodesOfType(NodeType::kCpu)[0]).cpuSet, "0-3");
}

struct BadNccl {
  const char* text;
  const char* says;
};

class TopologyNcclXmlErrors : public ::testing::TestWithParam<BadNccl> {};

TEST_P(TopologyNcclXmlErrors, AreInvalidArgumentsWithTheLine) {
  auto graph = ncclGraph(GetParam().text, "bad.xml");
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(graph.status().message().find(GetParam().says), std::string::npos)
      << graph.status().message();
  EXPECT_EQ(graph.status().message().rfind("bad.xml:", 0), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Files, TopologyNcclXmlErrors,
    ::testing::Values(
        BadNccl{"<topology/>", "NCCL's is <system>"}, BadNccl{"<system/>", "holds no <cpu>"},
        BadNccl{"<system><cpu affinity='xyz'/></system>", "is not a CPU mask"},
        BadNccl{"<system><cpu><pci class='0x030200' vendor='0x10de'/></cpu></system>",
                "without busid"},
        BadNccl{"<system><cpu><pci busid='nope' class='0x030200'/></cpu></system>",
                "not a PCI bus id"},
        BadNccl{"<system><cpu><pci busid='0000:01:00.0' class='0xzz'/></cpu></system>",
                "is not hex"},
        BadNccl{"<system><cpu><pci busid='0000:01:00.0' class='0x030200'><gpu dev='x'/></pci>"
                "</cpu></system>",
                "dev='x'"},
        BadNccl{"<system><cpu>"
                "<pci busid='0000:01:00.0' class='0x030200' vendor='0x10de'/>"
                "<pci busid='0000:01:00.0' class='0x030200' vendor='0x10de'/></cpu></system>",
                "appears twice"}));

TEST(TopologyNcclXml, CpuMasks) {
  EXPECT_EQ(cpuMaskToList("0000ffff,0000ffff").value(), "0-15,32-47");
  EXPECT_EQ(cpuMaskToList("0x1,0x80000001").value(), "0,31-32");
  EXPECT_EQ(cpuMaskToList("00000000").value(), "");
  EXPECT_EQ(cpuMaskToList("ffffffff,ffffffff").value(), "0-63");
  EXPECT_FALSE(cpuMaskToList("").ok());
  EXPECT_FALSE(cpuMaskToList("12,,34").ok());
  EXPECT_FALSE(cpuMaskToList("fffffffff").ok());
}

}  // namespace
}  // namespace braid::topology
