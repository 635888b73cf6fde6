#include "topology/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace braid::topology {

namespace {

// A bandwidth with its unit, or what an infinite one means.
std::string withUnit(double gbs) {
  return std::isinf(gbs) ? "local (no link crossed)" : formatBandwidth(gbs) + " GB/s";
}

// Transport matrices and rank lists wider than this are summarised.
constexpr int kMaxMatrixRanks = 32;
constexpr size_t kMaxListedRanks = 24;

// A node's name, prefixed by its host when the graph has several.
std::string label(const Graph& graph, int node) {
  const Node& n = graph.node(node);
  if (graph.hostCount() <= 1 || n.type == NodeType::kNet) return n.name;
  return graph.hostName(n.host) + "/" + n.name;
}

std::string describeNode(const Node& node) {
  std::ostringstream o;
  o << node.name;
  std::vector<std::string> facts;
  if (!node.busId.empty() && node.name.find(node.busId) == std::string::npos) {
    facts.push_back(node.busId);
  }
  switch (node.type) {
    case NodeType::kCpu:
      if (node.numaId >= 0) facts.push_back("NUMA " + std::to_string(node.numaId));
      if (!node.cpuSet.empty()) facts.push_back("cores " + node.cpuSet);
      if (!node.cpuVendor.empty()) facts.push_back(node.cpuVendor);
      break;
    case NodeType::kGpu:
      if (node.cudaDevice >= 0) facts.push_back("CUDA " + std::to_string(node.cudaDevice));
      if (node.smVersion > 0) facts.push_back("sm " + std::to_string(node.smVersion));
      break;
    case NodeType::kNic: {
      std::string speed = node.speedGbps > 0 ? formatBandwidth(node.speedGbps) + " Gb/s" : "";
      if (!node.linkLayer.empty()) speed += (speed.empty() ? "" : " ") + node.linkLayer;
      if (!speed.empty()) facts.push_back(speed);
      if (node.rdma) facts.push_back("RDMA port " + std::to_string(node.port));
      break;
    }
    default:
      break;
  }
  for (size_t i = 0; i < facts.size(); ++i) o << (i == 0 ? ": " : ", ") << facts[i];
  return o.str();
}

void describeSubtree(const Graph& graph, const PciTree& tree, int node, int depth,
                     std::ostringstream& o) {
  o << std::string(2 * depth + 2, ' ') << describeNode(graph.node(node));
  if (tree.parent[node] >= 0) {
    o << "  [" << formatBandwidth(graph.findLink(tree.parent[node], node)->bandwidthGBs)
      << " GB/s]";
  }
  o << "\n";
  for (int child : tree.children[node]) describeSubtree(graph, tree, child, depth + 1, o);
}

// A matrix of path types (and, below it, of bandwidths) from `rows` to `cols`.
void pathMatrix(const Graph& graph, const Paths& paths, const std::vector<int>& rows,
                const std::vector<int>& cols, const std::string& title, std::ostringstream& o) {
  if (rows.empty() || cols.empty()) return;
  size_t width = 5;
  for (int node : rows) width = std::max(width, label(graph, node).size() + 1);
  size_t cell = 6;
  for (int node : cols) cell = std::max(cell, label(graph, node).size() + 1);
  for (int part = 0; part < 2; ++part) {
    o << "\n" << title << (part == 0 ? ": path types\n" : ": bottleneck GB/s\n");
    o << std::string(width, ' ');
    for (int col : cols)
      o << std::string(cell - label(graph, col).size(), ' ') << label(graph, col);
    o << "\n";
    for (int row : rows) {
      const std::string name = label(graph, row);
      o << name << std::string(width - name.size(), ' ');
      for (int col : cols) {
        const Path& path = paths.between(row, col);
        std::string text = pathTypeName(path.type);
        if (part == 1)
          text = path.type == PathType::kDis ? "-" : formatBandwidth(path.bandwidthGBs);
        o << std::string(cell - std::min(cell - 1, text.size()), ' ') << text;
      }
      o << "\n";
    }
  }
}

// "0-3 host0/gpu0, 4 host0/gpu1": runs of ranks on the same device.
std::string describePlacement(const Graph& graph, const Placement& placement) {
  std::ostringstream o;
  size_t begin = 0;
  for (size_t runs = 0; begin < placement.size(); ++runs) {
    if (runs == kMaxListedRanks) {
      o << ", ...";
      break;
    }
    size_t end = begin + 1;
    while (end < placement.size() && placement[end] == placement[begin]) ++end;
    if (begin > 0) o << ", ";
    o << begin;
    if (end - begin > 1) o << "-" << end - 1;
    o << " " << label(graph, placement[begin].device);
    begin = end;
  }
  return o.str();
}

std::string listRanks(const std::vector<int>& ranks) {
  std::ostringstream o;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i == kMaxListedRanks) {
      o << " ... (" << ranks.size() << " ranks)";
      break;
    }
    o << (i == 0 ? "" : " ") << ranks[i];
  }
  return o.str();
}

std::string describeNetHop(const Graph& graph, const Placement& placement, const NetHop& hop) {
  std::ostringstream o;
  o << graph.hostName(placement[hop.fromRank].host) << " -> "
    << graph.hostName(placement[hop.toRank].host) << ": rank " << hop.fromRank << " -> rank "
    << hop.toRank << " (" << graph.node(hop.sendNic).name << " -> " << graph.node(hop.recvNic).name
    << ")";
  return o.str();
}

char transportLetter(TransportKind kind) {
  switch (kind) {
    case TransportKind::kCudaIpc:
      return 'i';
    case TransportKind::kShm:
      return 's';
    case TransportKind::kNet:
      return 'n';
    case TransportKind::kNone:
      break;
  }
  return '.';
}

std::vector<int> countTransports(const TransportMatrix& matrix) {
  std::vector<int> count(4, 0);
  for (size_t a = 0; a < matrix.size(); ++a) {
    for (size_t b = 0; b < matrix.size(); ++b) {
      if (a != b) ++count[static_cast<int>(matrix[a][b])];
    }
  }
  return count;
}

std::string transportCounts(const TransportMatrix& matrix) {
  const std::vector<int> count = countTransports(matrix);
  std::ostringstream o;
  bool first = true;
  for (TransportKind kind : {TransportKind::kCudaIpc, TransportKind::kShm, TransportKind::kNet}) {
    if (count[static_cast<int>(kind)] == 0) continue;
    o << (first ? "" : ", ") << transportName(kind) << " " << count[static_cast<int>(kind)];
    first = false;
  }
  if (first) o << "none";
  o << " (ordered pairs)";
  return o.str();
}

// The point-to-point routes of the first host's ranks to the other hosts (net_routes.h): where
// each receives, and by which NIC (and relay) each send to another host leaves.
void describeP2pRoutes(const Graph& graph, const Paths& paths, const TopologyPlan& plan,
                       std::ostream& o) {
  if (graph.hostCount() < 2 || plan.rankNics.size() != plan.placement.size()) return;
  o << "\nPoint-to-point between hosts (CROSS_NIC " << plan.p2p.crossNic << ", PXN level "
    << plan.p2p.pxnLevel << "), the first host's ranks:\n";
  const int first = plan.placement.front().host;
  for (size_t from = 0; from < plan.placement.size(); ++from) {
    if (plan.placement[from].host != first || plan.rankNics[from] < 0) continue;
    o << "  rank " << from << " receives by " << graph.node(plan.rankNics[from]).name
      << "; sends to";
    const char* separator = " ";
    for (size_t to = 0; to < plan.placement.size(); ++to) {
      if (plan.placement[to].host == first) continue;
      const P2pNetRoute route =
          p2pSendRoute(graph, paths, plan.placement, plan.rankNics, static_cast<int>(from),
                       static_cast<int>(to), plan.p2p);
      if (route.nic < 0) continue;
      o << separator << to << " by " << graph.node(route.nic).name;
      if (route.relayRank >= 0) o << " (PXN relay " << route.relayRank << ")";
      separator = ", ";
    }
    o << "\n";
  }
}

}  // namespace

std::string formatBandwidth(double gbs) {
  if (std::isinf(gbs)) return "local";
  char text[32];
  snprintf(text, sizeof(text), "%.4g", gbs);
  return text;
}

std::string describeMachine(const Graph& graph) {
  std::ostringstream o;
  const PciTree tree = pciTree(graph);
  for (int host = 0; host < graph.hostCount(); ++host) {
    o << graph.hostName(host) << "\n";
    for (int root : tree.roots) {
      if (graph.node(root).host == host) describeSubtree(graph, tree, root, 0, o);
    }
    bool header = false;
    for (int a = 0; a < graph.size(); ++a) {
      if (graph.node(a).host != host || graph.node(a).type == NodeType::kNet) continue;
      for (const Link& link : graph.node(a).links) {
        const int b = link.to;
        const bool treeEdge =
            link.type == LinkType::kPci && (tree.parent[b] == a || tree.parent[a] == b);
        if (b < a || treeEdge || graph.node(b).type == NodeType::kNet) continue;
        if (!header) o << "  other links:\n";
        header = true;
        o << "    " << graph.node(a).name << " - " << graph.node(b).name << "  "
          << linkTypeName(link.type) << "  " << formatBandwidth(link.bandwidthGBs) << " GB/s\n";
      }
    }
  }
  for (int net : graph.nodesOfType(NodeType::kNet)) {
    o << "network " << graph.node(net).name << ":\n";
    for (const Link& link : graph.node(net).links) {
      o << "  " << label(graph, link.to) << "  " << formatBandwidth(link.bandwidthGBs) << " GB/s\n";
    }
  }
  return o.str();
}

std::string describePaths(const Graph& graph, const Paths& paths) {
  std::ostringstream o;
  std::vector<int> gpus, nics, cpus;
  for (int host = 0; host < graph.hostCount(); ++host) {
    for (int gpu : gpusInCudaOrder(graph, host)) gpus.push_back(gpu);
  }
  nics = graph.nodesOfType(NodeType::kNic);
  cpus = graph.nodesOfType(NodeType::kCpu);
  o << "Path types: LOC same device, NVL NVLink, NVB NVLink through a GPU, PIX one PCIe switch,\n"
       "PXB several switches, PHB through a CPU, SYS across CPUs, NET across the network.\n";
  pathMatrix(graph, paths, gpus, gpus, "GPU to GPU", o);
  pathMatrix(graph, paths, gpus, nics, "GPU to NIC", o);
  pathMatrix(graph, paths, cpus, nics, "CPU to NIC", o);
  pathMatrix(graph, paths, cpus, cpus, "CPU to CPU", o);
  return o.str();
}

std::string describePlan(const Graph& graph, const Paths& paths, const TopologyPlan& plan) {
  std::ostringstream o;
  const int n = static_cast<int>(plan.placement.size());
  o << "Ranks (" << n << "): " << describePlacement(graph, plan.placement) << "\n";

  o << "\nTransports: " << transportCounts(plan.transports) << "\n";
  if (n <= kMaxMatrixRanks && n > 1) {
    o << "  i = cuda_ipc, s = shm, n = net\n    ";
    for (int b = 0; b < n; ++b) o << (b % 10);
    o << "\n";
    for (int a = 0; a < n; ++a) {
      char row[16];
      snprintf(row, sizeof(row), "%3d ", a);
      o << row;
      for (int b = 0; b < n; ++b) {
        o << transportLetter(plan.transports[a][b]);
      }
      o << "\n";
    }
  }

  const RingPlan& rings = plan.rings;
  o << "\nRings: " << rings.channels.size() << " channel(s), " << withUnit(rings.totalGBs())
    << " in all\n";
  for (size_t c = 0; c < rings.channels.size(); ++c) {
    const Ring& ring = rings.channels[c];
    o << "  channel " << c << "  " << withUnit(ring.bandwidthGBs) << ": " << listRanks(ring.order)
      << "\n";
    for (const NetHop& hop : ring.netHops) {
      o << "    " << describeNetHop(graph, plan.placement, hop) << "\n";
    }
    if (graph.hostCount() == 1 && ring.order.size() > 1) {
      o << "    steps across the socket link: "
        << stepsAtLeast(paths, plan.placement, ring.order, PathType::kSys) << "\n";
    }
  }

  describeP2pRoutes(graph, paths, plan, o);

  o << "\nTrees (double binary tree across hosts, a chain within each):\n";
  for (size_t t = 0; t < plan.trees.trees.size(); ++t) {
    const Tree& tree = plan.trees.trees[t];
    o << "  tree " << t << ": root " << tree.root << ", slowest edge "
      << withUnit(tree.bandwidthGBs) << "\n";
    for (const std::vector<int>& chain : tree.chains) {
      o << "    " << graph.hostName(plan.placement[chain.front()].host)
        << " chain: " << listRanks(chain) << "\n";
    }
    for (const NetHop& hop : tree.netHops) {
      o << "    " << describeNetHop(graph, plan.placement, hop) << "\n";
    }
  }
  return o.str();
}

std::string summarizeTopology(const Graph& graph, const TopologyPlan& plan) {
  std::ostringstream o;
  const int hosts = graph.hostCount();
  o << "topology: " << hosts << (hosts == 1 ? " host" : " hosts");
  for (int host = 0; host < hosts; ++host) {
    const size_t gpus = graph.nodesOfType(NodeType::kGpu, host).size();
    o << (host == 0 ? " (" : "; ") << graph.hostName(host) << ": "
      << graph.nodesOfType(NodeType::kCpu, host).size() << " CPU, " << gpus << " GPU"
      << (graph.nodesOfType(NodeType::kNvSwitch, host).empty() ? "" : " on NVSwitch") << ", "
      << graph.nodesOfType(NodeType::kNic, host).size() << " NIC";
    if (host == 3 && hosts > 4) {
      o << "; ...";
      break;
    }
  }
  o << "); " << plan.placement.size() << " ranks: " << describePlacement(graph, plan.placement)
    << "; transports: " << transportCounts(plan.transports)
    << "; rings: " << plan.rings.channels.size() << " channel(s), "
    << withUnit(plan.rings.totalGBs());
  if (!plan.rings.channels.empty()) o << ", order " << listRanks(plan.rings.channels[0].order);
  o << "; trees: " << plan.trees.trees.size() << ", roots";
  for (const Tree& tree : plan.trees.trees) o << " " << tree.root;
  o << ".";
  return o.str();
}

}  // namespace braid::topology
