#include "topology/hwloc_graph.h"

#include <hwloc.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

#include "topology/pci_bus_id.h"

namespace braid::topology {
namespace {

/// The PCI facts a NIC node copies from its device; empty for an OS device
/// hwloc found outside the PCI tree.
struct PciIdentity {
  std::string busId;
  unsigned vendorId = 0;
  unsigned classId = 0;
};

std::string bitmapList(hwloc_const_bitmap_t bitmap) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, bitmap) < 0 || text == nullptr) return "";
  std::unique_ptr<char, decltype(&free)> owned(text, &free);
  return owned.get();
}

/// The value hwloc stored in an enum field of an object's attributes. hwloc's XML import copies
/// a file's number into such a field unchecked (bridge_type="5-1", osdev_type="9"), and loading
/// a value outside the enum's range through the enum type is undefined behaviour in C++ (found
/// by topology_file_fuzz under UBSan); its bytes read as an int are not.
template <typename Enum>
int storedValue(const Enum& field) {
  static_assert(std::is_enum_v<Enum> && sizeof(Enum) == sizeof(int));
  int value = 0;
  memcpy(&value, &field, sizeof(value));
  return value;
}

int osDeviceType(hwloc_obj_t obj) { return storedValue(obj->attr->osdev.type); }

bool isNetworkOsDevice(hwloc_obj_t obj) {
  return obj->type == HWLOC_OBJ_OS_DEVICE && (osDeviceType(obj) == HWLOC_OBJ_OSDEV_NETWORK ||
                                              osDeviceType(obj) == HWLOC_OBJ_OSDEV_OPENFABRICS);
}

bool hasNetworkOsDevice(hwloc_obj_t pci) {
  for (hwloc_obj_t child = pci->io_first_child; child; child = child->next_sibling) {
    if (isNetworkOsDevice(child)) return true;
  }
  return false;
}

std::string busIdOf(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) {
  return formatPciBusId(pci.domain, pci.bus, pci.dev, pci.func);
}

double linkGBs(float hwlocLinkSpeed) {
  return hwlocLinkSpeed > 0 ? static_cast<double>(hwlocLinkSpeed) : kUnknownPciGBs;
}

/// The active ports hwloc recorded for an OpenFabrics device (infos
/// "Port<N>State", the port's state number), for when libibverbs is not
/// there to ask.
std::vector<int> activePortsFromInfos(hwloc_obj_t osdev) {
  constexpr int kIbPortActive = 4;
  const std::string prefix = "Port", suffix = "State";
  std::vector<int> ports;
  for (unsigned i = 0; i < osdev->infos_count; ++i) {
    const std::string name = osdev->infos[i].name ? osdev->infos[i].name : "";
    const char* value = osdev->infos[i].value;
    if (name.size() <= prefix.size() + suffix.size() || value == nullptr ||
        name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const size_t digits = name.size() - prefix.size() - suffix.size();
    int port = atoi(name.substr(prefix.size(), digits).c_str());
    if (port > 0 && atoi(value) == kIbPortActive) ports.push_back(port);
  }
  return ports;
}

class Converter {
 public:
  Converter(hwloc_topology_t topology, const HostFacts& facts)
      : topology_(topology), facts_(facts) {}

  Result<Graph> convert() {
    addCpus();
    if (cpus_.empty()) return internalError("the hwloc topology has no CPU at all");
    linkCpus();
    walk(hwloc_get_root_obj(topology_));
    placeUnseenDevices();
    return std::move(graph_);
  }

 private:
  /// One kCpu per NUMA node that has cores; NUMA nodes made only of memory
  /// (GPU memory, CXL, HBM) are not CPUs.
  void addCpus() {
    hwloc_obj_t numa = nullptr;
    while ((numa = hwloc_get_next_obj_by_type(topology_, HWLOC_OBJ_NUMANODE, numa)) != nullptr) {
      if (numa->cpuset == nullptr || hwloc_bitmap_iszero(numa->cpuset)) continue;
      addCpu(static_cast<int>(numa->os_index), numa->cpuset, vendorOf(numa));
    }
    if (cpus_.empty()) {  // a file without NUMA information: the whole machine is one
      hwloc_obj_t root = hwloc_get_root_obj(topology_);
      if (root->cpuset != nullptr && !hwloc_bitmap_iszero(root->cpuset)) {
        addCpu(0, root->cpuset, vendorOf(root));
      }
    }
  }

  void addCpu(int numaId, hwloc_const_bitmap_t cpuset, std::string vendor) {
    Node cpu;
    cpu.type = NodeType::kCpu;
    cpu.name = "cpu" + std::to_string(numaId);
    cpu.numaId = numaId;
    cpu.cpuSet = bitmapList(cpuset);
    cpu.cpuVendor = std::move(vendor);
    cpus_.push_back({numaId, graph_.addNode(std::move(cpu))});
  }

  /// The nearest CPUVendor info at or above `obj`: hwloc puts it on the
  /// Package, or on the Machine on some systems.
  static std::string vendorOf(hwloc_obj_t obj) {
    for (hwloc_obj_t o = obj; o != nullptr; o = o->parent) {
      if (const char* vendor = hwloc_obj_get_info_by_name(o, "CPUVendor")) return vendor;
    }
    return "";
  }

  void linkCpus() {
    for (size_t a = 0; a < cpus_.size(); ++a) {
      for (size_t b = a + 1; b < cpus_.size(); ++b) {
        double bandwidth = sysBandwidthGBs(graph_.node(cpus_[a].second).cpuVendor);
        graph_.connect(cpus_[a].second, cpus_[b].second, LinkType::kSys, bandwidth);
      }
    }
  }

  /// The CPU node of a NUMA node, or the first CPU when unknown (-1, or a
  /// NUMA node without cores).
  int cpuOfNuma(int numaId) const {
    for (const auto& [numa, node] : cpus_) {
      if (numa == numaId) return node;
    }
    return cpus_.front().second;
  }

  /// The CPU an I/O subtree below the normal object `obj` hangs off: the
  /// first NUMA node in its locality (the machine's first when hwloc only
  /// knows the device is somewhere in the machine).
  int cpuFor(hwloc_obj_t obj) const {
    if (obj->nodeset != nullptr) {
      for (const auto& [numa, node] : cpus_) {
        if (hwloc_bitmap_isset(obj->nodeset, static_cast<unsigned>(numa))) return node;
      }
    }
    return cpus_.front().second;
  }

  void walk(hwloc_obj_t obj) {
    for (hwloc_obj_t io = obj->io_first_child; io; io = io->next_sibling) {
      visitIo(io, cpuFor(obj), 0);
    }
    for (hwloc_obj_t child = obj->first_child; child; child = child->next_sibling) walk(child);
  }

  /// Whether `obj` is, or has below it, a GPU or a NIC.
  bool interesting(hwloc_obj_t obj) const {
    if (obj->type == HWLOC_OBJ_PCI_DEVICE) {
      PciRole role = roleOf(obj);
      return role == PciRole::kGpu || role == PciRole::kNic;
    }
    if (obj->type == HWLOC_OBJ_OS_DEVICE) return isNetworkOsDevice(obj);
    if (obj->type != HWLOC_OBJ_BRIDGE) return false;
    for (hwloc_obj_t child = obj->io_first_child; child; child = child->next_sibling) {
      if (interesting(child)) return true;
    }
    return false;
  }

  bool hasNvSwitchBelow(hwloc_obj_t obj) const {
    if (obj->type == HWLOC_OBJ_PCI_DEVICE) return roleOf(obj) == PciRole::kNvSwitch;
    for (hwloc_obj_t child = obj->io_first_child; child; child = child->next_sibling) {
      if (hasNvSwitchBelow(child)) return true;
    }
    return false;
  }

  PciRole roleOf(hwloc_obj_t pci) const {
    const auto& attr = pci->attr->pcidev;
    bool hasOsDevice = hasNetworkOsDevice(pci);
    PciRole role = classifyPciDevice(attr.vendor_id, attr.class_id,
                                     cudaGpu(busIdOf(attr)) != nullptr, hasOsDevice);
    // On the running system a NIC without an interface or RDMA device (no
    // driver bound, passed to a VM) can carry nothing.
    if (role == PciRole::kNic && facts_.liveSystem && !hasOsDevice) return PciRole::kNone;
    return role;
  }

  const CudaGpu* cudaGpu(const std::string& busId) const {
    for (const CudaGpu& gpu : facts_.cudaGpus) {
      if (gpu.busId == busId) return &gpu;
    }
    return nullptr;
  }

  /// `parent`: the graph node the subtree hangs off. `bridgeDepth`: PCI
  /// bridges passed since the host bridge. A PCIe switch shows as an
  /// upstream port bridge (even depth) over downstream port bridges (odd
  /// depth), and a root port is a bridge of depth 1: only the upstream port
  /// becomes a kPciSwitch, the others fold into their parent, as NCCL does,
  /// so that two devices under one switch are one switch apart.
  void visitIo(hwloc_obj_t obj, int parent, int bridgeDepth) {
    if (obj->type == HWLOC_OBJ_PCI_DEVICE) {
      addPciDevice(obj, parent);
      return;
    }
    if (obj->type == HWLOC_OBJ_OS_DEVICE) {  // outside the PCI tree
      if (isNetworkOsDevice(obj)) addNics(obj, PciIdentity{}, parent, kUnknownPciGBs);
      return;
    }
    if (obj->type != HWLOC_OBJ_BRIDGE) return;
    if (!interesting(obj)) {  // dropped, but an NVSwitch below still counts
      if (hasNvSwitchBelow(obj)) nvSwitch();
      return;
    }
    int below = parent;
    int depth = bridgeDepth;
    if (storedValue(obj->attr->bridge.upstream_type) == HWLOC_OBJ_BRIDGE_PCI) {
      depth = bridgeDepth + 1;
      if (depth % 2 == 0) below = addSwitch(obj, parent);
    }
    for (hwloc_obj_t child = obj->io_first_child; child; child = child->next_sibling) {
      visitIo(child, below, depth);
    }
  }

  int addSwitch(hwloc_obj_t bridge, int parent) {
    const auto& upstream = bridge->attr->bridge.upstream.pci;
    Node pciSwitch;
    pciSwitch.type = NodeType::kPciSwitch;
    pciSwitch.busId = busIdOf(upstream);
    pciSwitch.name = "pci@" + pciSwitch.busId;
    int index = graph_.addNode(std::move(pciSwitch));
    graph_.connect(parent, index, LinkType::kPci, linkGBs(upstream.linkspeed));
    return index;
  }

  void addPciDevice(hwloc_obj_t pci, int parent) {
    const auto& attr = pci->attr->pcidev;
    const std::string busId = busIdOf(attr);
    switch (roleOf(pci)) {
      case PciRole::kGpu:
        addGpu(busId, parent, linkGBs(attr.linkspeed));
        break;
      case PciRole::kNic: {
        PciIdentity identity{busId, attr.vendor_id, attr.class_id};
        const double bandwidth = linkGBs(attr.linkspeed);
        if (!hasNetworkOsDevice(pci)) addBareNic(identity, parent, bandwidth);
        for (hwloc_obj_t child = pci->io_first_child; child; child = child->next_sibling) {
          if (isNetworkOsDevice(child)) addNics(child, identity, parent, bandwidth);
        }
        break;
      }
      case PciRole::kNvSwitch:
        nvSwitch();
        break;
      case PciRole::kNone:
        break;
    }
  }

  void addGpu(const std::string& busId, int parent, double bandwidth) {
    Node gpu;
    gpu.type = NodeType::kGpu;
    gpu.busId = busId;
    if (const CudaGpu* cuda = cudaGpu(busId)) {
      gpu.cudaDevice = cuda->device;
      gpu.smVersion = cuda->smVersion;
      gpu.name = "gpu" + std::to_string(cuda->device);
    } else {
      gpu.name = "gpu@" + busId;
    }
    graph_.connect(parent, graph_.addNode(std::move(gpu)), LinkType::kPci, bandwidth);
  }

  /// All NVSwitch chips of a host are one node; NVLink (nvlink_graph.h)
  /// connects it, not PCI.
  int nvSwitch() {
    std::vector<int> existing = graph_.nodesOfType(NodeType::kNvSwitch);
    if (!existing.empty()) return existing.front();
    Node node;
    node.type = NodeType::kNvSwitch;
    node.name = "nvswitch";
    return graph_.addNode(std::move(node));
  }

  std::string linkLayerOfClass(unsigned classId, bool rdma) const {
    if (classId == kClassInfiniband) return "InfiniBand";
    if (classId == kClassEthernet) return "Ethernet";
    return rdma ? "InfiniBand" : "Ethernet";
  }

  /// The NIC nodes of one network or OpenFabrics OS device: each active
  /// RDMA port of it, or the plain interface.
  void addNics(hwloc_obj_t osdev, const PciIdentity& pci, int parent, double bandwidth) {
    const std::string name = osdev->name ? osdev->name : "";
    if (name.empty()) return;
    if (osDeviceType(osdev) == HWLOC_OBJ_OSDEV_NETWORK) {
      Node nic = nicNode(name, pci, false);
      for (const NetInterface& known : facts_.netInterfaces) {
        if (known.name != name) continue;
        nic.speedGbps = known.speedGbps;
        nic.linkLayer = known.linkLayer;
      }
      connectNic(std::move(nic), parent, bandwidth);
      return;
    }
    bool fromVerbs = false;
    for (const VerbsPort& port : facts_.verbsPorts) {  // libibverbs knows best
      if (port.device != name) continue;
      Node nic = nicNode(name + ":" + std::to_string(port.port), pci, true);
      nic.port = port.port;
      nic.speedGbps = port.speedGbps;
      nic.linkLayer = port.linkLayer;
      connectNic(std::move(nic), parent, bandwidth);
      fromVerbs = true;
    }
    if (fromVerbs) return;
    for (int port : activePortsFromInfos(osdev)) {  // a file, or no libibverbs
      Node nic = nicNode(name + ":" + std::to_string(port), pci, true);
      nic.port = port;
      connectNic(std::move(nic), parent, bandwidth);
    }
  }

  /// A NIC-class device without any OS device, in a file (written without
  /// them, or from a host with no driver bound): one node named after its
  /// bus id, an RDMA port 1 when it is a Mellanox device.
  void addBareNic(const PciIdentity& pci, int parent, double bandwidth) {
    bool rdma = pci.vendorId == kVendorMellanox;
    Node nic = nicNode("nic@" + pci.busId, pci, rdma);
    nic.port = rdma ? 1 : 0;
    connectNic(std::move(nic), parent, bandwidth);
  }

  Node nicNode(const std::string& name, const PciIdentity& pci, bool rdma) const {
    Node nic;
    nic.type = NodeType::kNic;
    nic.name = name;
    nic.busId = pci.busId;
    nic.rdma = rdma;
    nic.linkLayer = linkLayerOfClass(pci.classId, rdma);
    return nic;
  }

  void connectNic(Node nic, int parent, double bandwidth) {
    graph_.connect(parent, graph_.addNode(std::move(nic)), LinkType::kPci, bandwidth);
  }

  /// Devices the running system reports that hwloc did not place (no PCI
  /// access in a container, a NIC that is not on PCI): attached to the CPU
  /// of their NUMA node, or the first CPU, over a link of unknown speed.
  void placeUnseenDevices() {
    for (const CudaGpu& gpu : facts_.cudaGpus) {
      if (graph_.findByBusId(0, gpu.busId) < 0)
        addGpu(gpu.busId, cpuOfNuma(gpu.numaNode), kUnknownPciGBs);
    }
    for (const VerbsPort& port : facts_.verbsPorts) {
      std::string name = port.device + ":" + std::to_string(port.port);
      if (graph_.findByName(0, name) >= 0) continue;
      Node nic = nicNode(name, PciIdentity{port.busId, 0, 0}, true);
      nic.port = port.port;
      nic.speedGbps = port.speedGbps;
      nic.linkLayer = port.linkLayer;
      connectNic(std::move(nic), cpuOfNuma(port.numaNode), kUnknownPciGBs);
    }
    for (const NetInterface& interface : facts_.netInterfaces) {
      if (graph_.findByName(0, interface.name) >= 0) continue;
      Node nic = nicNode(interface.name, PciIdentity{interface.busId, 0, 0}, false);
      nic.speedGbps = interface.speedGbps;
      nic.linkLayer = interface.linkLayer;
      connectNic(std::move(nic), cpuOfNuma(interface.numaNode), kUnknownPciGBs);
    }
  }

  hwloc_topology_t topology_;
  const HostFacts& facts_;
  Graph graph_;
  std::vector<std::pair<int, int>> cpus_;  // (NUMA os index, graph node), in hwloc's order
};

}  // namespace

PciRole classifyPciDevice(unsigned vendorId, unsigned classId, bool isCudaDevice,
                          bool hasNetworkOsDevice) {
  if (isCudaDevice) return PciRole::kGpu;
  if (vendorId == kVendorNvidia && (classId == kClass3d || classId == kClassVga)) {
    return PciRole::kGpu;
  }
  if (vendorId == kVendorNvidia && classId == kClassOtherBridge) return PciRole::kNvSwitch;
  if (classId == kClassInfiniband || classId == kClassEthernet || hasNetworkOsDevice) {
    return PciRole::kNic;
  }
  return PciRole::kNone;
}

double sysBandwidthGBs(const std::string& cpuVendor) {
  return cpuVendor == "AuthenticAMD" ? 16.0 : 10.0;
}

Result<Graph> graphFromHwloc(hwloc_topology* topology, const HostFacts& facts) {
  return Converter(topology, facts).convert();
}

}  // namespace braid::topology
