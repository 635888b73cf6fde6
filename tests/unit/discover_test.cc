// Tests of topology discovery: the live discovery of the machine the tests
// run on (whatever it has: this must hold on a laptop, a VM without GPU and
// an 8-GPU server alike), hwloc XML files (one saved from a 2-core VM, one
// written by hand with a PCIe switch, GPUs, Mellanox NICs and an NVSwitch),
// malformed XML, and the pure parts: bus ids, sysfs interfaces in a made-up
// tree, InfiniBand speed codes, PCI classification, NVLink edges.
#include "topology/discover.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <hwloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "topology/hwloc_graph.h"
#include "topology/nvlink_graph.h"
#include "topology/nvml_loader.h"
#include "topology/pci_bus_id.h"
#include "topology/sysfs_nics.h"
#include "topology/verbs_abi.h"
#include "topology/verbs_nics.h"

#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>
#define BRAID_TEST_HAVE_VERBS_H 1
#endif

namespace braid::topology {
namespace {

// --- helpers -------------------------------------------------------------------

std::string fixturePath(const std::string& name) {
  return std::string(BRAID_TESTS_DIR) + "/data/topologies/" + name;
}

std::string readFixture(const std::string& name) {
  std::ifstream file(fixturePath(name));
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// Every link has its reverse with the same type and bandwidth, indices are
/// valid, and every node belongs to host 0.
void expectWellFormed(const Graph& graph) {
  for (int a = 0; a < graph.size(); ++a) {
    EXPECT_EQ(graph.node(a).host, 0) << graph.node(a).name;
    for (const Link& link : graph.node(a).links) {
      ASSERT_GE(link.to, 0);
      ASSERT_LT(link.to, graph.size());
      const Link* back = graph.findLink(link.to, a);
      ASSERT_NE(back, nullptr) << graph.node(a).name << " -> " << graph.node(link.to).name;
      EXPECT_EQ(back->type, link.type);
      EXPECT_DOUBLE_EQ(back->bandwidthGBs, link.bandwidthGBs);
      EXPECT_GT(link.bandwidthGBs, 0);
    }
  }
}

int byName(const Graph& graph, const std::string& name) {
  int index = graph.findByName(0, name);
  EXPECT_GE(index, 0) << "no node " << name;
  return index;
}

/// The only neighbour of `node` over PCI.
int pciParent(const Graph& graph, int node) {
  int parent = -1;
  for (const Link& link : graph.node(node).links) {
    if (link.type != LinkType::kPci) continue;
    EXPECT_EQ(parent, -1) << graph.node(node).name << " has several PCI links";
    parent = link.to;
  }
  return parent;
}

struct HwlocTopology {
  hwloc_topology_t topology = nullptr;
  HwlocTopology() {
    hwloc_topology_init(&topology);
    hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_topology_load(topology);
  }
  ~HwlocTopology() { hwloc_topology_destroy(topology); }
};

// --- PCI bus ids ---------------------------------------------------------------

TEST(DiscoveryPciBusId, NormalisesEverySpelling) {
  EXPECT_EQ(normalizePciBusId("00000000:17:00.0").value(), "0000:17:00.0");  // NVML
  EXPECT_EQ(normalizePciBusId("0000:AB:1F.7").value(), "0000:ab:1f.7");      // CUDA
  EXPECT_EQ(normalizePciBusId("17:00.1").value(), "0000:17:00.1");
  EXPECT_EQ(normalizePciBusId("0001:c1:00.0").value(), "0001:c1:00.0");
  EXPECT_EQ(formatPciBusId(0, 0x18, 0, 0), "0000:18:00.0");
}

TEST(DiscoveryPciBusId, RejectsWhatIsNotABusId) {
  for (const char* text : {"", "0000:17:00", "0000:17:20.0", "0000:17:00.8", "zz:00.0",
                           "0000:117:00.0", "x0000:17:00.0", "pci0000:00"}) {
    auto id = normalizePciBusId(text);
    ASSERT_FALSE(id.ok()) << text;
    EXPECT_EQ(id.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(id.status().message().find(text), std::string::npos);
  }
}

TEST(DiscoveryPciBusId, FindsTheDeepestPciDeviceInASysfsPath) {
  EXPECT_EQ(pciBusIdInSysfsPath("/sys/devices/pci0000:00/0000:00:03.0/virtio2"), "0000:00:03.0");
  EXPECT_EQ(pciBusIdInSysfsPath("/sys/devices/pci0000:16/0000:16:01.0/0000:17:00.0/0000:18:00.1"),
            "0000:18:00.1");
  EXPECT_EQ(pciBusIdInSysfsPath("/sys/devices/platform/ff540000.ethernet"), "");
  EXPECT_EQ(pciBusIdInSysfsPath(""), "");
}

// --- network interfaces from a made-up sysfs ------------------------------------

class DiscoverySysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/braid-sysfs-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
  }
  void TearDown() override { EXPECT_EQ(system(("rm -rf '" + root_ + "'").c_str()), 0); }

  void mkdirs(const std::string& relative) {
    std::string path = root_;
    std::stringstream parts(relative);
    std::string part;
    while (std::getline(parts, part, '/')) {
      if (part.empty()) continue;
      path += "/" + part;
      mkdir(path.c_str(), 0755);
    }
  }
  void write(const std::string& relative, const std::string& text) {
    std::ofstream(root_ + "/" + relative) << text << "\n";
  }
  /// class/net/<name>, with a `device` link to devices/<device> when given.
  void addInterface(const std::string& name, const std::string& device, int arpType,
                    const std::string& speed) {
    mkdirs("class/net/" + name);
    write("class/net/" + name + "/type", std::to_string(arpType));
    if (!speed.empty()) write("class/net/" + name + "/speed", speed);
    if (!device.empty()) {
      mkdirs("devices/" + device);
      ASSERT_EQ(symlink((root_ + "/devices/" + device).c_str(),
                        (root_ + "/class/net/" + name + "/device").c_str()),
                0);
    }
  }

  std::string root_;
};

TEST_F(DiscoverySysfs, ListsPhysicalInterfacesWithTheirPciDevice) {
  addInterface("eth0", "pci0000:00/0000:00:03.0/virtio2", 1, "-1");  // virtio: speed unknown
  addInterface("ib0", "pci0000:16/0000:16:01.0/0000:19:00.0", 32, "100000");
  mkdirs("bus/pci/devices/0000:19:00.0");
  write("bus/pci/devices/0000:19:00.0/numa_node", "1");
  addInterface("end0", "platform/ff540000.ethernet", 1, "1000");  // not on PCI
  addInterface("lo", "", 772, "");                                // virtual: no device link
  addInterface("ifb0", "", 1, "");
  addInterface("tun0", "pci0000:00/0000:00:05.0", 65534, "");  // not Ethernet or IPoIB

  std::vector<NetInterface> found = listNetInterfaces(root_);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].name, "end0");
  EXPECT_EQ(found[0].busId, "");
  EXPECT_EQ(found[0].numaNode, -1);
  EXPECT_DOUBLE_EQ(found[0].speedGbps, 1.0);
  EXPECT_EQ(found[1].name, "eth0");
  EXPECT_EQ(found[1].busId, "0000:00:03.0");
  EXPECT_DOUBLE_EQ(found[1].speedGbps, 0.0);
  EXPECT_EQ(found[1].linkLayer, "Ethernet");
  EXPECT_EQ(found[2].name, "ib0");
  EXPECT_EQ(found[2].busId, "0000:19:00.0");
  EXPECT_EQ(found[2].numaNode, 1);
  EXPECT_DOUBLE_EQ(found[2].speedGbps, 100.0);
  EXPECT_EQ(found[2].linkLayer, "InfiniBand");
}

TEST_F(DiscoverySysfs, NoNetworkDirectoryIsNoInterface) {
  EXPECT_TRUE(listNetInterfaces(root_ + "/nonexistent").empty());
}

// --- libibverbs -----------------------------------------------------------------

TEST(DiscoveryVerbs, PortSpeedFromWidthAndSpeedCodes) {
  EXPECT_DOUBLE_EQ(ibLaneRateGbps(32) * ibLaneCount(2), 100.0);    // 4x EDR
  EXPECT_DOUBLE_EQ(ibLaneRateGbps(64) * ibLaneCount(2), 200.0);    // 4x HDR
  EXPECT_DOUBLE_EQ(ibLaneRateGbps(128) * ibLaneCount(2), 400.0);   // 4x NDR
  EXPECT_DOUBLE_EQ(ibLaneRateGbps(128) * ibLaneCount(16), 200.0);  // 2x NDR
  EXPECT_DOUBLE_EQ(ibLaneRateGbps(256) * ibLaneCount(2), 800.0);   // 4x XDR
  EXPECT_DOUBLE_EQ(ibLaneRateGbps(1) * ibLaneCount(1), 2.5);       // 1x SDR
  EXPECT_DOUBLE_EQ(ibLaneRateGbps(3), 0.0);
  EXPECT_EQ(ibLaneCount(3), 0);
  EXPECT_STREQ(ibLinkLayerName(0), "InfiniBand");
  EXPECT_STREQ(ibLinkLayerName(1), "InfiniBand");
  EXPECT_STREQ(ibLinkLayerName(2), "Ethernet");
}

#ifdef BRAID_TEST_HAVE_VERBS_H
// braid declares the verbs structs itself (verbs_abi.h); they must match rdma-core's.
#define BRAID_EXPECT_SAME_OFFSET(ours, theirs, ourField, theirField) \
  static_assert(offsetof(verbs_abi::ours, ourField) == offsetof(theirs, theirField), #ourField)
BRAID_EXPECT_SAME_OFFSET(DeviceAttr, ibv_device_attr, vendorId, vendor_id);
BRAID_EXPECT_SAME_OFFSET(DeviceAttr, ibv_device_attr, atomicCap, atomic_cap);
BRAID_EXPECT_SAME_OFFSET(DeviceAttr, ibv_device_attr, maxPkeys, max_pkeys);
BRAID_EXPECT_SAME_OFFSET(DeviceAttr, ibv_device_attr, physPortCount, phys_port_cnt);
static_assert(sizeof(verbs_abi::DeviceAttr) == sizeof(ibv_device_attr), "ibv_device_attr size");
BRAID_EXPECT_SAME_OFFSET(PortAttr, ibv_port_attr, state, state);
BRAID_EXPECT_SAME_OFFSET(PortAttr, ibv_port_attr, lid, lid);
BRAID_EXPECT_SAME_OFFSET(PortAttr, ibv_port_attr, activeWidth, active_width);
BRAID_EXPECT_SAME_OFFSET(PortAttr, ibv_port_attr, activeSpeed, active_speed);
BRAID_EXPECT_SAME_OFFSET(PortAttr, ibv_port_attr, linkLayer, link_layer);
BRAID_EXPECT_SAME_OFFSET(PortAttr, ibv_port_attr, portCapFlags2, port_cap_flags2);
static_assert(sizeof(verbs_abi::PortAttr) >= sizeof(ibv_port_attr), "ibv_port_attr size");
static_assert(verbs_abi::kPortActive == IBV_PORT_ACTIVE, "IBV_PORT_ACTIVE");
static_assert(verbs_abi::kLinkLayerEthernet == IBV_LINK_LAYER_ETHERNET, "link layer");
#endif

bool hasRdmaDevices() {
  struct stat info;
  return stat("/sys/class/infiniband", &info) == 0;
}

TEST(DiscoveryVerbs, ListingPortsNeverFails) {
  VerbsReport report = listVerbsPorts();
  if (!hasRdmaDevices()) {
    EXPECT_TRUE(report.ports.empty());
  }
  for (const VerbsPort& port : report.ports) {
    EXPECT_FALSE(port.device.empty());
    EXPECT_GE(port.port, 1);
    EXPECT_TRUE(port.linkLayer == "InfiniBand" || port.linkLayer == "Ethernet");
  }
}

// --- NVML -----------------------------------------------------------------------

bool nvmlInstalled() {
  void* handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

TEST(DiscoveryNvml, AbsentNvmlIsReportedNotFatal) {
  NvmlReport report = queryNvLinks();
  if (nvmlInstalled()) GTEST_SKIP() << "NVML is installed here";
  EXPECT_FALSE(report.loaded);
  EXPECT_TRUE(report.gpus.empty());
  EXPECT_NE(report.note.find("libnvidia-ml.so.1"), std::string::npos) << report.note;
}

// --- PCI classification and bandwidth models ------------------------------------

TEST(DiscoveryClassify, GpusNicsAndNvSwitchesByClassAndVendor) {
  EXPECT_EQ(classifyPciDevice(0x10de, 0x0302, false, false), PciRole::kGpu);
  EXPECT_EQ(classifyPciDevice(0x10de, 0x0300, false, false), PciRole::kGpu);
  EXPECT_EQ(classifyPciDevice(0x1a03, 0x0300, false, false), PciRole::kNone);  // a BMC's VGA
  EXPECT_EQ(classifyPciDevice(0x1234, 0x0380, true, false), PciRole::kGpu);    // CUDA says so
  EXPECT_EQ(classifyPciDevice(0x10de, 0x0680, false, false), PciRole::kNvSwitch);
  EXPECT_EQ(classifyPciDevice(0x15b3, 0x0207, false, false), PciRole::kNic);
  EXPECT_EQ(classifyPciDevice(0x15b3, 0x0200, false, false), PciRole::kNic);
  EXPECT_EQ(classifyPciDevice(0x8086, 0x0200, false, false), PciRole::kNic);
  EXPECT_EQ(classifyPciDevice(0x1d0f, 0x0000, false, true), PciRole::kNic);    // an OS says so
  EXPECT_EQ(classifyPciDevice(0x144d, 0x0108, false, false), PciRole::kNone);  // NVMe
  EXPECT_EQ(classifyPciDevice(0x8086, 0x0604, false, false), PciRole::kNone);  // a bridge
}

TEST(DiscoveryBandwidth, NvLinkPerGenerationAndSocketLinks) {
  EXPECT_DOUBLE_EQ(nvLinkBandwidthGBs(60), 20.0);
  EXPECT_DOUBLE_EQ(nvLinkBandwidthGBs(70), 25.0);
  EXPECT_DOUBLE_EQ(nvLinkBandwidthGBs(80), 25.0);
  EXPECT_DOUBLE_EQ(nvLinkBandwidthGBs(86), 14.0625);
  EXPECT_DOUBLE_EQ(nvLinkBandwidthGBs(90), 25.0);
  EXPECT_DOUBLE_EQ(nvLinkBandwidthGBs(100), 50.0);
  EXPECT_DOUBLE_EQ(nvLinkBandwidthGBs(0), 20.0);
  EXPECT_DOUBLE_EQ(sysBandwidthGBs("AuthenticAMD"), 16.0);
  EXPECT_DOUBLE_EQ(sysBandwidthGBs("GenuineIntel"), 10.0);
  EXPECT_DOUBLE_EQ(sysBandwidthGBs(""), 10.0);
}

// --- NVLink edges ---------------------------------------------------------------

Graph fourGpus(int smVersion) {
  Graph graph;
  Node cpu;
  cpu.name = "cpu0";
  int cpuIndex = graph.addNode(cpu);
  for (int i = 0; i < 4; ++i) {
    Node gpu;
    gpu.type = NodeType::kGpu;
    gpu.name = "gpu" + std::to_string(i);
    gpu.busId = formatPciBusId(0, 0x18 + i, 0, 0);
    gpu.smVersion = smVersion;
    graph.connect(cpuIndex, graph.addNode(gpu), LinkType::kPci, 31.5);
  }
  return graph;
}

TEST(DiscoveryNvLinks, GpuPairsReportedFromBothEndsMakeOneEdge) {
  Graph graph = fourGpus(90);
  std::vector<GpuNvLinks> nvml = {
      {"0000:18:00.0", 90, {{"0000:19:00.0", NvLinkPeerType::kGpu, 4}}},
      {"0000:19:00.0", 90, {{"0000:18:00.0", NvLinkPeerType::kGpu, 4}}},
      {"0000:1a:00.0",
       90,
       {{"0000:1b:00.0", NvLinkPeerType::kGpu, 2},
        {"0000:99:00.0", NvLinkPeerType::kGpu, 1},      // not in the graph
        {"0000:9a:00.0", NvLinkPeerType::kOther, 1}}},  // a POWER NPU
      {"0000:1b:00.0", 90, {{"0000:1a:00.0", NvLinkPeerType::kGpu, 2}}},
      {"0000:77:00.0", 90, {{"0000:18:00.0", NvLinkPeerType::kGpu, 3}}},  // unknown GPU
  };
  EXPECT_EQ(addNvLinks(graph, nvml), 2);
  const Link* ab = graph.findLink(1, 2);
  ASSERT_NE(ab, nullptr);
  EXPECT_EQ(ab->type, LinkType::kNvLink);
  EXPECT_DOUBLE_EQ(ab->bandwidthGBs, 4 * 25.0);
  const Link* cd = graph.findLink(3, 4);
  ASSERT_NE(cd, nullptr);
  EXPECT_DOUBLE_EQ(cd->bandwidthGBs, 2 * 25.0);
  EXPECT_EQ(graph.findLink(1, 3), nullptr);
  EXPECT_TRUE(graph.nodesOfType(NodeType::kNvSwitch).empty());
  expectWellFormed(graph);
}

TEST(DiscoveryNvLinks, AllNvSwitchChipsAreOneNodeAndFillUnknownArchitecture) {
  Graph graph = fourGpus(0);
  std::vector<GpuNvLinks> nvml;
  for (int i = 0; i < 4; ++i) {
    GpuNvLinks gpu{formatPciBusId(0, 0x18 + i, 0, 0), 100, {}};
    // 18 links spread over two NVSwitch chips, as on an HGX B200 tray.
    gpu.peers.push_back({"0000:c1:00.0", NvLinkPeerType::kNvSwitch, 9});
    gpu.peers.push_back({"0000:c2:00.0", NvLinkPeerType::kNvSwitch, 9});
    nvml.push_back(gpu);
  }
  EXPECT_EQ(addNvLinks(graph, nvml), 4);
  std::vector<int> nvSwitches = graph.nodesOfType(NodeType::kNvSwitch);
  ASSERT_EQ(nvSwitches.size(), 1u);
  for (int gpu : graph.nodesOfType(NodeType::kGpu)) {
    EXPECT_EQ(graph.node(gpu).smVersion, 100);
    const Link* link = graph.findLink(gpu, nvSwitches[0]);
    ASSERT_NE(link, nullptr);
    EXPECT_EQ(link->type, LinkType::kNvLink);
    EXPECT_DOUBLE_EQ(link->bandwidthGBs, 18 * 50.0);
  }
  expectWellFormed(graph);
}

// --- hwloc XML: this VM ------------------------------------------------------------

TEST(DiscoveryHwlocXml, SavedTopologyOfATwoCoreVm) {
  std::string xml = readFixture("hwloc-vm-2cpu-virtio.xml");
  ASSERT_FALSE(xml.empty());
  auto parsed = parseHwlocXml(xml);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const Graph& graph = parsed.value();
  expectWellFormed(graph);
  ASSERT_EQ(graph.size(), 2);  // the disk (vda) is left out
  const Node& cpu = graph.node(0);
  EXPECT_EQ(cpu.type, NodeType::kCpu);
  EXPECT_EQ(cpu.name, "cpu0");
  EXPECT_EQ(cpu.numaId, 0);
  EXPECT_EQ(cpu.cpuSet, "0-1");
  EXPECT_EQ(cpu.cpuVendor, "AuthenticAMD");
  int eth0 = byName(graph, "eth0");
  ASSERT_GE(eth0, 0);
  const Node& nic = graph.node(eth0);
  EXPECT_EQ(nic.type, NodeType::kNic);
  EXPECT_EQ(nic.busId, "0000:00:03.0");
  EXPECT_FALSE(nic.rdma);
  EXPECT_EQ(nic.port, 0);
  EXPECT_EQ(nic.linkLayer, "Ethernet");
  ASSERT_EQ(pciParent(graph, eth0), 0);
  EXPECT_DOUBLE_EQ(graph.findLink(eth0, 0)->bandwidthGBs, kUnknownPciGBs);  // virtio: no speed
}

// --- hwloc XML: a GPU server made by hand -----------------------------------------

TEST(DiscoveryHwlocXml, RecognisesGpusNicsAndSwitchesByClassAndVendor) {
  auto parsed = parseHwlocXml(readFixture("hwloc-2socket-gpu-mlx.xml"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const Graph& graph = parsed.value();
  expectWellFormed(graph);

  std::vector<int> cpus = graph.nodesOfType(NodeType::kCpu);
  ASSERT_EQ(cpus.size(), 2u);
  const int cpu0 = cpus[0], cpu1 = cpus[1];
  EXPECT_EQ(graph.node(cpu0).numaId, 0);
  EXPECT_EQ(graph.node(cpu0).cpuSet, "0-3");
  EXPECT_EQ(graph.node(cpu1).numaId, 1);
  EXPECT_EQ(graph.node(cpu1).cpuSet, "4-7");
  EXPECT_EQ(graph.node(cpu1).cpuVendor, "GenuineIntel");
  const Link* sys = graph.findLink(cpu0, cpu1);
  ASSERT_NE(sys, nullptr);
  EXPECT_EQ(sys->type, LinkType::kSys);
  EXPECT_DOUBLE_EQ(sys->bandwidthGBs, 10.0);

  // The switch: its upstream port; the root port and downstream ports fold away.
  std::vector<int> switches = graph.nodesOfType(NodeType::kPciSwitch);
  ASSERT_EQ(switches.size(), 1u);
  const int pciSwitch = switches[0];
  EXPECT_EQ(graph.node(pciSwitch).busId, "0000:16:00.0");
  ASSERT_NE(graph.findLink(pciSwitch, cpu0), nullptr);
  EXPECT_NEAR(graph.findLink(pciSwitch, cpu0)->bandwidthGBs, 31.507692, 1e-5);

  const int gpu0 = byName(graph, "gpu@0000:18:00.0");
  ASSERT_GE(gpu0, 0);
  EXPECT_EQ(graph.node(gpu0).type, NodeType::kGpu);
  EXPECT_EQ(graph.node(gpu0).busId, "0000:18:00.0");
  EXPECT_EQ(graph.node(gpu0).cudaDevice, -1);  // a file says nothing of CUDA
  EXPECT_EQ(pciParent(graph, gpu0), pciSwitch);

  const int mlx = byName(graph, "mlx5_0:1");
  ASSERT_GE(mlx, 0);
  EXPECT_EQ(graph.node(mlx).type, NodeType::kNic);
  EXPECT_TRUE(graph.node(mlx).rdma);
  EXPECT_EQ(graph.node(mlx).port, 1);
  EXPECT_EQ(graph.node(mlx).busId, "0000:19:00.0");
  EXPECT_EQ(graph.node(mlx).linkLayer, "InfiniBand");
  EXPECT_EQ(pciParent(graph, mlx), pciSwitch);
  const int ipoib = byName(graph, "ib0");
  ASSERT_GE(ipoib, 0);
  EXPECT_FALSE(graph.node(ipoib).rdma);
  EXPECT_EQ(graph.node(ipoib).linkLayer, "InfiniBand");
  EXPECT_EQ(pciParent(graph, ipoib), pciSwitch);

  const int eno1 = byName(graph, "eno1");
  ASSERT_GE(eno1, 0);
  EXPECT_EQ(graph.node(eno1).linkLayer, "Ethernet");
  ASSERT_EQ(pciParent(graph, eno1), cpu0);
  EXPECT_DOUBLE_EQ(graph.findLink(eno1, cpu0)->bandwidthGBs, kUnknownPciGBs);

  // Socket 1: a VGA-class NVIDIA GPU straight on a root port, a Mellanox
  // adapter known only by class and vendor, and an NVSwitch.
  const int gpu1 = byName(graph, "gpu@0000:81:00.0");
  ASSERT_GE(gpu1, 0);
  ASSERT_EQ(pciParent(graph, gpu1), cpu1);
  EXPECT_NEAR(graph.findLink(gpu1, cpu1)->bandwidthGBs, 15.753846, 1e-5);
  const int bare = byName(graph, "nic@0000:82:00.0");
  ASSERT_GE(bare, 0);
  EXPECT_TRUE(graph.node(bare).rdma);
  EXPECT_EQ(graph.node(bare).port, 1);
  EXPECT_EQ(pciParent(graph, bare), cpu1);
  std::vector<int> nvSwitches = graph.nodesOfType(NodeType::kNvSwitch);
  ASSERT_EQ(nvSwitches.size(), 1u);
  EXPECT_TRUE(graph.node(nvSwitches[0]).links.empty());  // NVLink comes from NVML, not PCI

  // Nothing else: no disk, SATA controller, BMC VGA, or bridges leading only to those.
  EXPECT_EQ(graph.nodesOfType(NodeType::kGpu).size(), 2u);
  EXPECT_EQ(graph.nodesOfType(NodeType::kNic).size(), 4u);
  EXPECT_EQ(graph.size(), 10);
}

TEST(DiscoveryHwlocXml, MalformedXmlIsAClearError) {
  const std::string fixture = readFixture("hwloc-vm-2cpu-virtio.xml");
  const std::vector<std::string> bad = {
      "",
      "   \n",
      "this is not XML",
      fixture.substr(0, fixture.size() / 2),                                        // cut short
      "<?xml version=\"1.0\"?><system version=\"1\"><cpu numaid=\"0\"/></system>",  // NCCL's
  };
  for (const std::string& text : bad) {
    auto parsed = parseHwlocXml(text);
    ASSERT_FALSE(parsed.ok()) << text.substr(0, 60);
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("hwloc XML"), std::string::npos)
        << parsed.status().message();
  }
}

// --- the machine the tests run on -------------------------------------------------

TEST(DiscoveryLive, ThisMachine) {
  auto discovered = discoverTopology();
  ASSERT_TRUE(discovered.ok()) << discovered.status().message();
  const Graph& graph = discovered.value();
  expectWellFormed(graph);

  // What hwloc says of this machine, asked directly.
  HwlocTopology hwloc;
  int numaWithCores = 0;
  hwloc_obj_t numa = nullptr;
  while ((numa = hwloc_get_next_obj_by_type(hwloc.topology, HWLOC_OBJ_NUMANODE, numa))) {
    if (!hwloc_bitmap_iszero(numa->cpuset)) ++numaWithCores;
  }
  int nvidiaGpus = 0;
  hwloc_obj_t pci = nullptr;
  while ((pci = hwloc_get_next_pcidev(hwloc.topology, pci))) {
    const auto& attr = pci->attr->pcidev;
    nvidiaGpus += attr.vendor_id == 0x10de && (attr.class_id == 0x0302 || attr.class_id == 0x0300);
  }

  // One CPU per NUMA node, whose cores together are every core hwloc sees.
  std::vector<int> cpus = graph.nodesOfType(NodeType::kCpu);
  ASSERT_EQ(static_cast<int>(cpus.size()), numaWithCores);
  hwloc_bitmap_t cores = hwloc_bitmap_alloc();
  for (int cpu : cpus) {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    ASSERT_EQ(hwloc_bitmap_list_sscanf(set, graph.node(cpu).cpuSet.c_str()), 0);
    EXPECT_FALSE(hwloc_bitmap_iszero(set)) << graph.node(cpu).name;
    hwloc_bitmap_or(cores, cores, set);
    hwloc_bitmap_free(set);
    for (int other : cpus) {
      if (other == cpu) continue;
      const Link* sys = graph.findLink(cpu, other);
      ASSERT_NE(sys, nullptr) << graph.node(cpu).name << " - " << graph.node(other).name;
      EXPECT_EQ(sys->type, LinkType::kSys);
    }
  }
  EXPECT_TRUE(hwloc_bitmap_isequal(cores, hwloc_get_root_obj(hwloc.topology)->cpuset));
  EXPECT_GT(hwloc_get_nbobjs_by_type(hwloc.topology, HWLOC_OBJ_CORE), 0);
  hwloc_bitmap_free(cores);

  // GPUs: exactly the NVIDIA display controllers (none on a machine without GPU).
  EXPECT_EQ(static_cast<int>(graph.nodesOfType(NodeType::kGpu).size()), nvidiaGpus);
  if (!nvmlInstalled()) {
    for (const Node& node : graph.nodes()) {
      for (const Link& link : node.links) EXPECT_NE(link.type, LinkType::kNvLink);
    }
  }
  // Every physical interface the kernel lists is a socket NIC below a CPU or switch.
  for (const NetInterface& interface : listNetInterfaces()) {
    int nic = graph.findByName(0, interface.name);
    ASSERT_GE(nic, 0) << interface.name;
    EXPECT_EQ(graph.node(nic).type, NodeType::kNic);
    EXPECT_FALSE(graph.node(nic).rdma);
    EXPECT_EQ(graph.node(nic).busId, interface.busId);
    int parent = pciParent(graph, nic);
    ASSERT_GE(parent, 0);
    NodeType parentType = graph.node(parent).type;
    EXPECT_TRUE(parentType == NodeType::kCpu || parentType == NodeType::kPciSwitch);
  }
}

TEST(DiscoveryLive, AgreesWithHwlocXmlOfTheSameMachine) {
  // hwloc's own XML export of this machine, read back, gives the same graph
  // as live discovery, but for what only the running system tells: CUDA
  // indices, port speeds, and devices hwloc does not place.
  HwlocTopology hwloc;
  char* buffer = nullptr;
  int length = 0;
  ASSERT_EQ(hwloc_topology_export_xmlbuffer(hwloc.topology, &buffer, &length, 0), 0);
  std::string xml(buffer, static_cast<size_t>(length > 0 ? length - 1 : 0));
  hwloc_free_xmlbuffer(hwloc.topology, buffer);

  auto fromXml = parseHwlocXml(xml);
  ASSERT_TRUE(fromXml.ok()) << fromXml.status().message();
  auto live = discoverTopology();
  ASSERT_TRUE(live.ok()) << live.status().message();
  std::set<std::string> liveNames, xmlNames;
  for (const Node& node : live.value().nodes()) {
    if (node.type == NodeType::kCpu || node.type == NodeType::kPciSwitch)
      liveNames.insert(node.name);
  }
  for (const Node& node : fromXml.value().nodes()) {
    if (node.type == NodeType::kCpu || node.type == NodeType::kPciSwitch)
      xmlNames.insert(node.name);
  }
  EXPECT_EQ(liveNames, xmlNames);
  EXPECT_EQ(live.value().nodesOfType(NodeType::kGpu).size(),
            fromXml.value().nodesOfType(NodeType::kGpu).size());
}

}  // namespace
}  // namespace braid::topology
