#include "topology/nccl_xml.h"

#include <algorithm>
#include <cstdlib>
#include <map>

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
  explicit NcclXmlReader(std::string source) : source_(std::move(source)) {}

  Result<Graph> read(const XmlElement& system) {
    if (system.name != "system") {
      return error(system, "the root element is <" + system.name + ">, NCCL's is <system>");
    }
    std::vector<int> cpus;
    for (const XmlElement& child : system.children) {
      if (child.name != "cpu") continue;
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
    int line = 0;
  };

  Status error(const XmlElement& element, const std::string& message) const {
    return invalidArgument(source_ + ":" + std::to_string(element.line) + ": " + message);
  }

  Result<int> readCpu(const XmlElement& element, int ordinal) {
    Node cpu;
    cpu.type = NodeType::kCpu;
    if (const std::string* numa = element.attribute("numaid")) {
      if (!parseInt(*numa, &cpu.numaId)) return error(element, "numaid='" + *numa + "'");
    }
    cpu.name = "cpu" + std::to_string(cpu.numaId >= 0 ? cpu.numaId : ordinal);
    cpu.cpuVendor = element.attributeOr("vendor", "");
    if (const std::string* affinity = element.attribute("affinity")) {
      auto list = cpuMaskToList(*affinity);
      if (!list.ok()) return error(element, list.status().message());
      cpu.cpuSet = list.value();
    }
    const int index = graph_.addNode(std::move(cpu));
    for (const XmlElement& child : element.children) {
      if (child.name == "pci") {
        BRAID_TRY(readPci(child, index, kUnknownPciGBs));
      } else if (child.name == "nic") {
        // A NIC NCCL could not place on PCI hangs off its CPU directly.
        BRAID_TRY(readNic(child, PciDevice{}, index, 0));
      }
    }
    return index;
  }

  Result<PciDevice> classify(const XmlElement& element) {
    PciDevice device;
    const std::string* busId = element.attribute("busid");
    if (busId == nullptr) return error(element, "<pci> without busid");
    auto normal = normalizePciBusId(*busId);
    if (!normal.ok()) return error(element, normal.status().message());
    device.busId = normal.value();
    unsigned code = 0;
    if (const std::string* cls = element.attribute("class")) {
      if (!parseHexNumber(*cls, &code)) return error(element, "class='" + *cls + "' is not hex");
    }
    device.classCode = code > 0xFFFF ? code >> 8 : code;  // "0x060400" or "0x0604"
    if (const std::string* vendor = element.attribute("vendor")) {
      if (!parseHexNumber(*vendor, &device.vendor)) {
        return error(element, "vendor='" + *vendor + "' is not hex");
      }
    }
    const bool hasGpu = !element.childrenNamed("gpu").empty();
    const bool hasNic = !element.childrenNamed("nic").empty();
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
  bool leadsToDevices(const XmlElement& element) {
    if (element.name == "nic" || element.name == "gpu") return true;
    if (element.name != "pci") return false;
    auto device = classify(element);
    if (!device.ok()) return true;  // keep it, so that read() reports the error
    if (device.value().isGpu || device.value().isNic) return true;
    if (!device.value().isBridge) return false;
    return std::any_of(element.children.begin(), element.children.end(),
                       [&](const XmlElement& child) { return leadsToDevices(child); });
  }

  double linkBandwidth(const XmlElement& element, double parentGBs) {
    double gts = 0;
    int width = 0;
    if (parseGigaTransfers(element.attributeOr("link_speed", ""), &gts) &&
        parseInt(element.attributeOr("link_width", ""), &width) && width > 0 && width <= 32) {
      return pciBandwidthGBs(gts, width);
    }
    return parentGBs;  // unknown: as fast as the link above it
  }

  Status readPci(const XmlElement& element, int parent, double parentGBs) {
    if (!leadsToDevices(element)) return Status::success();
    BRAID_ASSIGN_OR_RETURN(const PciDevice device, classify(element));
    const double bandwidth = linkBandwidth(element, parentGBs);
    const int host = graph_.node(parent).host;
    if (graph_.findByBusId(host, device.busId) >= 0) {
      return error(element, "bus id " + device.busId + " appears twice");
    }
    if (device.isGpu) return readGpu(element, device, parent, bandwidth);
    if (device.isNic) {
      const std::vector<const XmlElement*> nics = element.childrenNamed("nic");
      if (nics.empty()) return readNic(element, device, parent, bandwidth);
      for (const XmlElement* nic : nics) BRAID_TRY(readNic(*nic, device, parent, bandwidth));
      return Status::success();
    }
    Node bridge;
    bridge.type = NodeType::kPciSwitch;
    bridge.host = host;
    bridge.busId = device.busId;
    bridge.name = "pci" + device.busId;
    const int index = graph_.addNode(std::move(bridge));
    graph_.connect(parent, index, LinkType::kPci, bandwidth);
    for (const XmlElement& child : element.children) {
      if (child.name == "pci") BRAID_TRY(readPci(child, index, bandwidth));
    }
    return Status::success();
  }

  Status readGpu(const XmlElement& element, const PciDevice& device, int parent, double bw) {
    Node gpu;
    gpu.type = NodeType::kGpu;
    gpu.host = graph_.node(parent).host;
    gpu.busId = device.busId;
    const std::vector<const XmlElement*> details = element.childrenNamed("gpu");
    if (!details.empty()) {
      const XmlElement& info = *details.front();
      if (const std::string* dev = info.attribute("dev")) {
        if (!parseInt(*dev, &gpu.cudaDevice) || gpu.cudaDevice < 0) {
          return error(info, "dev='" + *dev + "'");
        }
      }
      if (const std::string* sm = info.attribute("sm")) {
        if (!parseInt(*sm, &gpu.smVersion) || gpu.smVersion < 0) {
          return error(info, "sm='" + *sm + "'");
        }
      }
    }
    const int index = graph_.addNode(std::move(gpu));
    graph_.connect(parent, index, LinkType::kPci, bw);
    for (const XmlElement* info : details) {
      for (const XmlElement* nvlink : info->childrenNamed("nvlink")) {
        BRAID_TRY(recordNvlink(*nvlink, index));
      }
    }
    return Status::success();
  }

  Status recordNvlink(const XmlElement& element, int gpu) {
    NvlinkRequest request;
    request.gpu = gpu;
    request.line = element.line;
    const std::string* target = element.attribute("target");
    if (target == nullptr) return error(element, "<nvlink> without target");
    auto busId = normalizePciBusId(*target);
    if (!busId.ok()) return error(element, busId.status().message());
    request.target = busId.value();
    if (const std::string* count = element.attribute("count")) {
      if (!parseInt(*count, &request.count) || request.count < 1 || request.count > 64) {
        return error(element, "count='" + *count + "'");
      }
    }
    if (const std::string* tclass = element.attribute("tclass")) {
      unsigned code = 0;
      if (!parseHexNumber(*tclass, &code)) return error(element, "tclass='" + *tclass + "'");
      request.targetClass = code > 0xFFFF ? code >> 8 : code;
    }
    nvlinks_.push_back(std::move(request));
    return Status::success();
  }

  // One NIC node per port (<net>), or one for the whole device when the file
  // names no ports.
  Status readNic(const XmlElement& element, const PciDevice& device, int parent, double bw) {
    const bool infiniBand = device.classCode == kClassInfiniband;
    auto makeNic = [&](const XmlElement* net) -> Result<Node> {
      Node nic;
      nic.type = NodeType::kNic;
      nic.host = graph_.node(parent).host;
      nic.busId = device.busId;
      nic.rdma = infiniBand || device.vendor == kVendorMellanox;
      if (device.classCode == kClassInfiniband) nic.linkLayer = "InfiniBand";
      if (device.classCode == kClassEthernet) nic.linkLayer = "Ethernet";
      if (net != nullptr) {
        nic.name = net->attributeOr("name", "");
        int speedMbps = 0;
        if (const std::string* speed = net->attribute("speed")) {
          if (!parseInt(*speed, &speedMbps) || speedMbps < 0)
            return error(*net, "speed='" + *speed + "'");
        }
        nic.speedGbps = speedMbps / 1000.0;
        if (const std::string* port = net->attribute("port")) {
          if (!parseInt(*port, &nic.port) || nic.port < 0)
            return error(*net, "port='" + *port + "'");
        }
      }
      if (nic.name.empty()) nic.name = "nic" + std::to_string(nicCount_);
      ++nicCount_;
      return nic;
    };
    std::vector<const XmlElement*> nets =
        element.name == "nic" ? element.childrenNamed("net") : std::vector<const XmlElement*>{};
    if (nets.empty()) nets.push_back(nullptr);
    for (const XmlElement* net : nets) {
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
    for (const NvlinkRequest& request : nvlinks_) {
      const int host = graph_.node(request.gpu).host;
      if (request.targetClass == kClassOtherBridge) {
        toSwitch[request.gpu] += request.count;
        continue;
      }
      const int peer = graph_.findByBusId(host, request.target);
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

  std::string source_;
  Graph graph_;
  std::vector<NvlinkRequest> nvlinks_;
  int nicCount_ = 0;
};

}  // namespace

Result<Graph> graphFromNcclXml(const XmlElement& system, const std::string& sourceName) {
  return NcclXmlReader(sourceName).read(system);
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
