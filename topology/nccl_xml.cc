#include "topology/nccl_xml.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>

#include "topology/hwloc_graph.h"
#include "topology/nvlink_graph.h"
#include "topology/pci_bus_id.h"

namespace braid::topology {

namespace {

// PCI ids beyond those discovery names (hwloc_graph.h).
constexpr unsigned kBaseClassBridge = 0x06;

bool parseHexNumber(const std::string& text, unsigned* value) {
  const char* begin = text.c_str();
  if (text.compare(0, 2, "0x") == 0 || text.compare(0, 2, "0X") == 0) begin += 2;
  char* end = nullptr;
  const unsigned long v = strtoul(begin, &end, 16);
  if (end == begin || *end != '\0' || v > 0xFFFFFFFFul) return false;
  *value = static_cast<unsigned>(v);
  return true;
}

bool parseInt(const std::string& text, int* value) {
  char* end = nullptr;
  const long v = strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < -1000000 || v > 1000000000) return false;
  *value = static_cast<int>(v);
  return true;
}

// "32.0 GT/s PCIe", "16 GT/s", "8.0 GT/s": the number in front.
bool parseGigaTransfers(const std::string& text, double* value) {
  char* end = nullptr;
  const double v = strtod(text.c_str(), &end);
  if (end == text.c_str() || !(v > 0) || v > 1000) return false;
  *value = v;
  return true;
}

// What a <pci> element is, from its attributes and children.
struct PciDevice {
  std::string busId;
  unsigned classCode = 0;  ///< base class and subclass: 0x0604, 0x0302, ...
  unsigned vendor = 0;     ///< 0 when not given
  bool isBridge = false;
  bool isGpu = false;
  bool isNic = false;
};

class NcclXmlReader {
 public:
  explicit NcclXmlReader(const XmlDocument& document) : document_(document) {}

  Result<Graph> read() {
    const pugi::xml_node system = document_.root();
    if (std::string(system.name()) != "system") {
      return error(system,
                   std::string("the root element is <") + system.name() + ">, NCCL's is <system>");
    }
    std::vector<int> cpus;
    for (const pugi::xml_node child : system.children("cpu")) {
      BRAID_ASSIGN_OR_RETURN(const int cpu, readCpu(child, static_cast<int>(cpus.size())));
      cpus.push_back(cpu);
    }
    if (cpus.empty()) return error(system, "<system> holds no <cpu>");
    // NCCL joins every pair of CPUs of a host directly.
    for (size_t a = 0; a < cpus.size(); ++a) {
      for (size_t b = a + 1; b < cpus.size(); ++b) {
        graph_.connect(cpus[a], cpus[b], LinkType::kSys,
                       sysBandwidthGBs(graph_.node(cpus[a]).cpuVendor));
      }
    }
    numberGpus();
    BRAID_TRY(connectNvlinks());
    connectNetwork();
    return std::move(graph_);
  }

 private:
  struct NvlinkRequest {
    int gpu = -1;
    std::string target;  ///< normalised bus id
    int count = 1;
    unsigned targetClass = 0;
  };

  Status error(const pugi::xml_node& element, const std::string& message) const {
    return document_.error(element, message);
  }

  Result<int> readCpu(const pugi::xml_node& element, int ordinal) {
    Node cpu;
    cpu.type = NodeType::kCpu;
    if (const auto numa = attributeValue(element, "numaid")) {
      if (!parseInt(*numa, &cpu.numaId)) return error(element, "numaid='" + *numa + "'");
    }
    cpu.name = "cpu" + std::to_string(cpu.numaId >= 0 ? cpu.numaId : ordinal);
    cpu.cpuVendor = attributeOr(element, "vendor", "");
    if (const auto affinity = attributeValue(element, "affinity")) {
      auto list = cpuMaskToList(*affinity);
      if (!list.ok()) return error(element, list.status().message());
      cpu.cpuSet = list.value();
    }
    const int index = graph_.addNode(std::move(cpu));
    for (const pugi::xml_node child : element.children()) {
      if (!isElement(child)) continue;
      const std::string name = child.name();
      if (name == "pci") {
        BRAID_TRY(readPci(child, index, kUnknownPciGBs));
      } else if (name == "nic") {
        // A NIC NCCL could not place on PCI hangs off its CPU directly.
        BRAID_TRY(readNic(child, PciDevice{}, index, 0));
      }
    }
    return index;
  }

  Result<PciDevice> classify(const pugi::xml_node& element) {
    PciDevice device;
    const auto busId = attributeValue(element, "busid");
    if (!busId) return error(element, "<pci> without busid");
    auto normal = normalizePciBusId(*busId);
    if (!normal.ok()) return error(element, normal.status().message());
    device.busId = normal.value();
    unsigned code = 0;
    if (const auto cls = attributeValue(element, "class")) {
      if (!parseHexNumber(*cls, &code)) return error(element, "class='" + *cls + "' is not hex");
    }
    device.classCode = code > 0xFFFF ? code >> 8 : code;  // "0x060400" or "0x0604"
    if (const auto vendor = attributeValue(element, "vendor")) {
      if (!parseHexNumber(*vendor, &device.vendor)) {
        return error(element, "vendor='" + *vendor + "' is not hex");
      }
    }
    const bool hasGpu = static_cast<bool>(element.child("gpu"));
    const bool hasNic = static_cast<bool>(element.child("nic"));
    device.isGpu = hasGpu ||
                   (device.vendor == kVendorNvidia &&
                    (device.classCode == kClassVga || device.classCode == kClass3d)) ||
                   (device.vendor == 0 && device.classCode == kClass3d);
    device.isNic = !device.isGpu && (hasNic || device.classCode == kClassInfiniband ||
                                     device.classCode == kClassEthernet);
    device.isBridge = !device.isGpu && !device.isNic && (device.classCode >> 8) == kBaseClassBridge;
    return device;
  }

  // Whether anything braid models (a GPU or NIC) lies at or below `element`.
  // readPci asks at every level of a PCIe tree, so the answers are kept: a
  // file of deep bridges would otherwise take the square of its size.
  bool leadsToDevices(const pugi::xml_node& element) {
    const std::string name = element.name();
    if (name == "nic" || name == "gpu") return true;
    if (name != "pci") return false;
    const auto known = leadsToDevices_.find(element.internal_object());
    if (known != leadsToDevices_.end()) return known->second;
    bool leads = true;  // a <pci> that does not classify is kept, so that read() reports it
    if (auto device = classify(element); device.ok()) {
      leads = device.value().isGpu || device.value().isNic ||
              (device.value().isBridge &&
               std::any_of(element.begin(), element.end(),
                           [&](const pugi::xml_node& child) { return leadsToDevices(child); }));
    }
    leadsToDevices_[element.internal_object()] = leads;
    return leads;
  }

  double linkBandwidth(const pugi::xml_node& element, double parentGBs) {
    double gts = 0;
    int width = 0;
    if (parseGigaTransfers(attributeOr(element, "link_speed", ""), &gts) &&
        parseInt(attributeOr(element, "link_width", ""), &width) && width > 0 && width <= 32) {
      return pciBandwidthGBs(gts, width);
    }
    return parentGBs;  // unknown: as fast as the link above it
  }

  Status readPci(const pugi::xml_node& element, int parent, double parentGBs) {
    if (!leadsToDevices(element)) return Status::success();
    BRAID_ASSIGN_OR_RETURN(const PciDevice device, classify(element));
    const double bandwidth = linkBandwidth(element, parentGBs);
    const int host = graph_.node(parent).host;
    // A set, not graph_.findByBusId: a file of many devices would take the square of its size.
    if (!busIds_.insert(device.busId).second) {
      return error(element, "bus id " + device.busId + " appears twice");
    }
    if (device.isGpu) return readGpu(element, device, parent, bandwidth);
    if (device.isNic) {
      if (!element.child("nic")) return readNic(element, device, parent, bandwidth);
      for (const pugi::xml_node nic : element.children("nic")) {
        BRAID_TRY(readNic(nic, device, parent, bandwidth));
      }
      return Status::success();
    }
    Node bridge;
    bridge.type = NodeType::kPciSwitch;
    bridge.host = host;
    bridge.busId = device.busId;
    bridge.name = "pci" + device.busId;
    const int index = graph_.addNode(std::move(bridge));
    graph_.connect(parent, index, LinkType::kPci, bandwidth);
    for (const pugi::xml_node child : element.children("pci")) {
      BRAID_TRY(readPci(child, index, bandwidth));
    }
    return Status::success();
  }

  Status readGpu(const pugi::xml_node& element, const PciDevice& device, int parent, double bw) {
    Node gpu;
    gpu.type = NodeType::kGpu;
    gpu.host = graph_.node(parent).host;
    gpu.busId = device.busId;
    if (const pugi::xml_node info = element.child("gpu")) {
      if (const auto dev = attributeValue(info, "dev")) {
        if (!parseInt(*dev, &gpu.cudaDevice) || gpu.cudaDevice < 0) {
          return error(info, "dev='" + *dev + "'");
        }
      }
      if (const auto sm = attributeValue(info, "sm")) {
        if (!parseInt(*sm, &gpu.smVersion) || gpu.smVersion < 0) {
          return error(info, "sm='" + *sm + "'");
        }
      }
    }
    const int index = graph_.addNode(std::move(gpu));
    graph_.connect(parent, index, LinkType::kPci, bw);
    for (const pugi::xml_node info : element.children("gpu")) {
      for (const pugi::xml_node nvlink : info.children("nvlink")) {
        BRAID_TRY(recordNvlink(nvlink, index));
      }
    }
    return Status::success();
  }

  Status recordNvlink(const pugi::xml_node& element, int gpu) {
    NvlinkRequest request;
    request.gpu = gpu;
    const auto target = attributeValue(element, "target");
    if (!target) return error(element, "<nvlink> without target");
    auto busId = normalizePciBusId(*target);
    if (!busId.ok()) return error(element, busId.status().message());
    request.target = busId.value();
    if (const auto count = attributeValue(element, "count")) {
      if (!parseInt(*count, &request.count) || request.count < 1 || request.count > 64) {
        return error(element, "count='" + *count + "'");
      }
    }
    if (const auto tclass = attributeValue(element, "tclass")) {
      unsigned code = 0;
      if (!parseHexNumber(*tclass, &code)) return error(element, "tclass='" + *tclass + "'");
      request.targetClass = code > 0xFFFF ? code >> 8 : code;
    }
    nvlinks_.push_back(std::move(request));
    return Status::success();
  }

  // One NIC node per port (<net>), or one for the whole device when the file
  // names no ports.
  Status readNic(const pugi::xml_node& element, const PciDevice& device, int parent, double bw) {
    const bool infiniBand = device.classCode == kClassInfiniband;
    // `net` is empty for a NIC whose ports the file does not name.
    auto makeNic = [&](const pugi::xml_node& net) -> Result<Node> {
      Node nic;
      nic.type = NodeType::kNic;
      nic.host = graph_.node(parent).host;
      nic.busId = device.busId;
      nic.rdma = infiniBand || device.vendor == kVendorMellanox;
      if (device.classCode == kClassInfiniband) nic.linkLayer = "InfiniBand";
      if (device.classCode == kClassEthernet) nic.linkLayer = "Ethernet";
      if (net) {
        nic.name = attributeOr(net, "name", "");
        int speedMbps = 0;
        if (const auto speed = attributeValue(net, "speed")) {
          if (!parseInt(*speed, &speedMbps) || speedMbps < 0) {
            return error(net, "speed='" + *speed + "'");
          }
        }
        nic.speedGbps = speedMbps / 1000.0;
        if (const auto port = attributeValue(net, "port")) {
          if (!parseInt(*port, &nic.port) || nic.port < 0) {
            return error(net, "port='" + *port + "'");
          }
        }
      }
      if (nic.name.empty()) nic.name = "nic" + std::to_string(nicCount_);
      ++nicCount_;
      return nic;
    };
    std::vector<pugi::xml_node> nets;
    if (std::string(element.name()) == "nic") {
      for (const pugi::xml_node net : element.children("net")) nets.push_back(net);
    }
    if (nets.empty()) nets.emplace_back();
    for (const pugi::xml_node& net : nets) {
      BRAID_ASSIGN_OR_RETURN(Node nic, makeNic(net));
      // A NIC off its CPU (no PCI link known) is as fast as its port.
      const double linkGBs =
          bw > 0 ? bw : (nic.speedGbps > 0 ? netBandwidthGBs(nic.speedGbps) : kUnknownPciGBs);
      const int index = graph_.addNode(std::move(nic));
      graph_.connect(parent, index, LinkType::kPci, linkGBs);
    }
    return Status::success();
  }

  // GPUs the file gives no CUDA index get one in bus id order, the order
  // CUDA_DEVICE_ORDER=PCI_BUS_ID gives; names follow the index.
  void numberGpus() {
    std::vector<int> gpus = graph_.nodesOfType(NodeType::kGpu);
    std::vector<int> unnumbered;
    int next = 0;
    for (int gpu : gpus) {
      if (graph_.node(gpu).cudaDevice < 0) {
        unnumbered.push_back(gpu);
      } else {
        next = std::max(next, graph_.node(gpu).cudaDevice + 1);
      }
    }
    std::sort(unnumbered.begin(), unnumbered.end(),
              [&](int a, int b) { return graph_.node(a).busId < graph_.node(b).busId; });
    for (int gpu : unnumbered) graph_.node(gpu).cudaDevice = next++;
    for (int gpu : gpus)
      graph_.node(gpu).name = "gpu" + std::to_string(graph_.node(gpu).cudaDevice);
  }

  // NVLinks: both GPUs of a pair usually list each other, so a pair counts
  // the larger of the two counts, not their sum. All NVSwitches of a host
  // become one node, as NCCL models them; a GPU's links to the several
  // switch chips add up.
  Status connectNvlinks() {
    std::map<std::pair<int, int>, int> gpuPairs;
    std::map<int, int> toSwitch;
    std::map<std::string, int> byBusId;  // the first node of each bus id, as findByBusId finds
    for (int node = 0; node < graph_.size(); ++node) {
      if (!graph_.node(node).busId.empty()) byBusId.emplace(graph_.node(node).busId, node);
    }
    for (const NvlinkRequest& request : nvlinks_) {
      if (request.targetClass == kClassOtherBridge) {
        toSwitch[request.gpu] += request.count;
        continue;
      }
      const auto found = byBusId.find(request.target);
      const int peer = found == byBusId.end() ? -1 : found->second;
      if (peer < 0 || graph_.node(peer).type != NodeType::kGpu || peer == request.gpu) {
        // NVLinks to CPUs (POWER9) or to GPUs the file does not list: not modelled.
        continue;
      }
      const std::pair<int, int> key = std::minmax(request.gpu, peer);
      gpuPairs[key] = std::max(gpuPairs[key], request.count);
    }
    for (const auto& [pair, count] : gpuPairs) {
      const int sm =
          std::min(graph_.node(pair.first).smVersion, graph_.node(pair.second).smVersion);
      graph_.connect(pair.first, pair.second, LinkType::kNvLink, count * nvLinkBandwidthGBs(sm));
    }
    if (!toSwitch.empty()) {
      Node nvswitch;
      nvswitch.type = NodeType::kNvSwitch;
      nvswitch.name = "nvswitch";
      const int index = graph_.addNode(std::move(nvswitch));
      for (const auto& [gpu, count] : toSwitch) {
        graph_.connect(gpu, index, LinkType::kNvLink,
                       count * nvLinkBandwidthGBs(graph_.node(gpu).smVersion));
      }
    }
    return Status::success();
  }

  // The NICs lead to a network; its node lets paths leave the host. A NIC
  // of unknown speed is taken to be as fast as its PCIe link.
  void connectNetwork() {
    const std::vector<int> nics = graph_.nodesOfType(NodeType::kNic);
    if (nics.empty()) return;
    Node net;
    net.type = NodeType::kNet;
    net.host = -1;
    net.name = "net";
    const int index = graph_.addNode(std::move(net));
    for (int nic : nics) {
      double bandwidth = netBandwidthGBs(graph_.node(nic).speedGbps);
      if (bandwidth <= 0) bandwidth = graph_.node(nic).links.front().bandwidthGBs;
      graph_.connect(nic, index, LinkType::kNet, bandwidth);
    }
  }

  const XmlDocument& document_;
  Graph graph_;
  std::vector<NvlinkRequest> nvlinks_;
  std::set<std::string> busIds_;  ///< of the <pci> devices read so far (one host)
  std::unordered_map<const void*, bool> leadsToDevices_;
  int nicCount_ = 0;
};

}  // namespace

Result<Graph> graphFromNcclXml(const XmlDocument& document) {
  return NcclXmlReader(document).read();
}

Result<std::string> cpuMaskToList(const std::string& mask) {
  std::vector<uint32_t> words;  // most significant first
  size_t begin = 0;
  while (begin <= mask.size()) {
    size_t end = mask.find(',', begin);
    if (end == std::string::npos) end = mask.size();
    unsigned word = 0;
    const std::string part = mask.substr(begin, end - begin);
    if (part.empty() || part.size() > 10 || !parseHexNumber(part, &word)) {
      return invalidArgument("'" + mask + "' is not a CPU mask (hex words separated by commas)");
    }
    words.push_back(word);
    begin = end + 1;
  }
  std::string list;
  int runStart = -1;
  const int bits = static_cast<int>(words.size()) * 32;
  for (int cpu = 0; cpu <= bits; ++cpu) {
    const bool set = cpu < bits && ((words[words.size() - 1 - cpu / 32] >> (cpu % 32)) & 1u);
    if (set && runStart < 0) runStart = cpu;
    if (!set && runStart >= 0) {
      if (!list.empty()) list += ",";
      list += std::to_string(runStart);
      if (cpu - 1 > runStart) list += "-" + std::to_string(cpu - 1);
      runStart = -1;
    }
  }
  return list;
}

}  // namespace braid::topology
