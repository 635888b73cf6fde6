#include "topology/discover.h"

#include <hwloc.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <string>

#include "base/log.h"
#include "topology/hwloc_graph.h"
#include "topology/nvlink_graph.h"
#include "topology/nvml_loader.h"

namespace braid::topology {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* topology) const { hwloc_topology_destroy(topology); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

/// hwloc plugins that query GPUs themselves: discovery asks CUDA and NVML
/// directly, and loading OpenCL or GL inside a communication library would
/// initialise drivers (or contact an X server) for nothing.
constexpr const char* kSkippedHwlocComponents[] = {"opencl", "gl",   "cuda",
                                                   "nvml",   "rsmi", "levelzero"};

Result<TopologyPtr> newTopology() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return systemError(std::string("hwloc_topology_init failed: ") + strerror(errno));
  }
  TopologyPtr topology(raw);
  // Every bridge, PCI and OS device: the conversion decides what matters.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  return topology;
}

HostFacts liveFacts() {
  HostFacts facts;
  facts.liveSystem = true;
  facts.cudaGpus = listCudaGpus();
  VerbsReport verbs = listVerbsPorts();
  if (!verbs.loaded) {
    BRAID_INFO("topology: libibverbs not usable (%s): RDMA ports from hwloc only, speed unknown",
               verbs.note.c_str());
  } else if (!verbs.note.empty()) {
    BRAID_INFO("topology: libibverbs: %s", verbs.note.c_str());
  }
  facts.verbsPorts = std::move(verbs.ports);
  facts.netInterfaces = listNetInterfaces();
  return facts;
}

void addLiveNvLinks(Graph& graph) {
  NvmlReport nvml = queryNvLinks();
  if (!nvml.loaded) {
    BRAID_INFO("NVML not found: no NVLink information (%s)", nvml.note.c_str());
    return;
  }
  if (!nvml.note.empty()) BRAID_INFO("topology: NVML: %s", nvml.note.c_str());
  int edges = addNvLinks(graph, nvml.gpus);
  BRAID_INFO("topology: NVML reports %d NVLink edges", edges);
}

}  // namespace

Result<Graph> discoverTopology() {
  BRAID_ASSIGN_OR_RETURN(TopologyPtr topology, newTopology());
  for (const char* component : kSkippedHwlocComponents) {
    // An unknown name is harmless (hwloc built without that plugin).
    hwloc_topology_set_components(topology.get(), HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                  component);
  }
  if (hwloc_topology_load(topology.get()) != 0) {
    return systemError(std::string("hwloc cannot load this machine's topology: ") +
                       strerror(errno));
  }
  HostFacts facts = liveFacts();
  BRAID_ASSIGN_OR_RETURN(Graph graph, graphFromHwloc(topology.get(), facts));
  addLiveNvLinks(graph);
  return graph;
}

int attachVerbsPorts(Graph& graph, const std::vector<VerbsPort>& ports) {
  const std::vector<int> cpus = graph.nodesOfType(NodeType::kCpu, 0);
  if (cpus.empty()) return 0;
  int added = 0;
  for (const VerbsPort& port : ports) {
    const std::string name = port.device + ":" + std::to_string(port.port);
    if (graph.findByName(0, name) >= 0) continue;
    int cpu = cpus.front();
    for (int candidate : cpus) {
      if (graph.node(candidate).numaId == port.numaNode) cpu = candidate;
    }
    Node nic;
    nic.type = NodeType::kNic;
    nic.host = 0;
    nic.name = name;
    nic.busId = port.busId;
    nic.rdma = true;
    nic.port = port.port;
    nic.speedGbps = port.speedGbps;
    nic.linkLayer = port.linkLayer;
    graph.connect(cpu, graph.addNode(std::move(nic)), LinkType::kPci, kUnknownPciGBs);
    ++added;
  }
  return added;
}

int attachInterfaces(Graph& graph, const std::vector<std::string>& names) {
  const std::vector<int> cpus = graph.nodesOfType(NodeType::kCpu, 0);
  if (cpus.empty()) return 0;
  int added = 0;
  for (const std::string& name : names) {
    if (graph.findByName(0, name) >= 0) continue;
    Node nic;
    nic.type = NodeType::kNic;
    nic.host = 0;
    nic.name = name;
    nic.linkLayer = "Ethernet";
    graph.connect(cpus.front(), graph.addNode(std::move(nic)), LinkType::kPci, kUnknownPciGBs);
    ++added;
  }
  return added;
}

std::vector<std::string> leaveOutRdmaPorts(
    Graph& graph, int host, const std::function<bool(const std::string&, int)>& allowed) {
  std::vector<std::string> left;
  for (int nic : graph.nodesOfType(NodeType::kNic, host)) {
    Node& node = graph.node(nic);
    if (!node.rdma) continue;
    // "mlx5_0:1" as discovery names ports, "mlx5_0" as topology files name NICs.
    const std::string device = node.name.substr(0, node.name.find(':'));
    if (allowed(device, node.port > 0 ? node.port : 1)) continue;
    node.rdma = false;
    left.push_back(node.name);
  }
  return left;
}

Result<Graph> parseHwlocXml(const std::string& xmlText) {
  if (xmlText.find_first_not_of(" \t\r\n") == std::string::npos) {
    return invalidArgument("the hwloc XML topology is empty");
  }
  if (xmlText.size() >= static_cast<size_t>(INT_MAX)) {
    return invalidArgument("the hwloc XML topology is too large (" +
                           std::to_string(xmlText.size()) + " bytes)");
  }
  BRAID_ASSIGN_OR_RETURN(TopologyPtr topology, newTopology());
  // The size hwloc takes counts the terminating NUL, as hwloc's own export gives it.
  if (hwloc_topology_set_xmlbuffer(topology.get(), xmlText.c_str(),
                                   static_cast<int>(xmlText.size() + 1)) != 0 ||
      hwloc_topology_load(topology.get()) != 0) {
    return invalidArgument(std::string("not a valid hwloc XML topology (hwloc: ") +
                           strerror(errno) + "); `lstopo --of xml` writes one");
  }
  return graphFromHwloc(topology.get(), HostFacts{});
}

}  // namespace braid::topology
