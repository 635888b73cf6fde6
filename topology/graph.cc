#include "topology/graph.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace braid::topology {

namespace {

std::string upper(const std::string& text) {
  std::string out = text;
  for (auto& c : out) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  return out;
}

constexpr PathType kAllPathTypes[] = {PathType::kLoc, PathType::kNvl, PathType::kNvb,
                                      PathType::kPix, PathType::kPxb, PathType::kPhb,
                                      PathType::kSys, PathType::kNet, PathType::kDis};

}  // namespace

const char* nodeTypeName(NodeType type) {
  switch (type) {
    case NodeType::kCpu:
      return "CPU";
    case NodeType::kPciSwitch:
      return "PCI";
    case NodeType::kGpu:
      return "GPU";
    case NodeType::kNic:
      return "NIC";
    case NodeType::kNvSwitch:
      return "NVS";
    case NodeType::kNet:
      return "NET";
  }
  return "?";
}

const char* linkTypeName(LinkType type) {
  switch (type) {
    case LinkType::kNvLink:
      return "NVL";
    case LinkType::kPci:
      return "PCI";
    case LinkType::kSys:
      return "SYS";
    case LinkType::kNet:
      return "NET";
  }
  return "?";
}

const char* pathTypeName(PathType type) {
  switch (type) {
    case PathType::kLoc:
      return "LOC";
    case PathType::kNvl:
      return "NVL";
    case PathType::kNvb:
      return "NVB";
    case PathType::kPix:
      return "PIX";
    case PathType::kPxb:
      return "PXB";
    case PathType::kPhb:
      return "PHB";
    case PathType::kSys:
      return "SYS";
    case PathType::kNet:
      return "NET";
    case PathType::kDis:
      return "DIS";
  }
  return "?";
}

Result<PathType> parsePathType(const std::string& text) {
  const std::string name = upper(text);
  for (PathType type : kAllPathTypes) {
    if (name == pathTypeName(type)) return type;
  }
  // NCCL's legacy numbers predate NVL and NVB, hence the gap.
  if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit) && name.size() < 6) {
    static constexpr PathType kLegacy[] = {PathType::kLoc, PathType::kPix, PathType::kPxb,
                                           PathType::kPhb, PathType::kSys};
    const int level = std::atoi(name.c_str());
    return level < 5 ? kLegacy[level] : PathType::kSys;
  }
  return invalidArgument("'" + text +
                         "' is not a path type: expected LOC, NVL, NVB, PIX, PXB, PHB, SYS, NET "
                         "or one of NCCL's numbers 0-4");
}

Result<LinkType> parseLinkType(const std::string& text) {
  const std::string name = upper(text);
  for (LinkType type : {LinkType::kNvLink, LinkType::kPci, LinkType::kSys, LinkType::kNet}) {
    if (name == linkTypeName(type)) return type;
  }
  return invalidArgument("'" + text + "' is not a link type: expected NVL, PCI, SYS or NET");
}

int Graph::addNode(Node node) {
  nodes_.push_back(std::move(node));
  return size() - 1;
}

void Graph::connect(int a, int b, LinkType type, double bandwidthGBs) {
  auto addOneWay = [&](int from, int to) {
    for (Link& link : nodes_[from].links) {
      if (link.to == to && link.type == type) {
        link.bandwidthGBs += bandwidthGBs;
        return;
      }
    }
    nodes_[from].links.push_back(Link{to, type, bandwidthGBs});
  };
  addOneWay(a, b);
  addOneWay(b, a);
}

const Link* Graph::findLink(int a, int b) const {
  for (const Link& link : nodes_[a].links) {
    if (link.to == b) return &link;
  }
  return nullptr;
}

std::vector<int> Graph::nodesOfType(NodeType type) const {
  std::vector<int> out;
  for (int i = 0; i < size(); ++i) {
    if (nodes_[i].type == type) out.push_back(i);
  }
  return out;
}

std::vector<int> Graph::nodesOfType(NodeType type, int host) const {
  std::vector<int> out;
  for (int i = 0; i < size(); ++i) {
    if (nodes_[i].type == type && nodes_[i].host == host) out.push_back(i);
  }
  return out;
}

int Graph::hostCount() const {
  int count = 0;
  for (const Node& node : nodes_) {
    if (node.type != NodeType::kNet) count = std::max(count, node.host + 1);
  }
  return count;
}

int Graph::findByName(int host, const std::string& name) const {
  for (int i = 0; i < size(); ++i) {
    if (nodes_[i].host == host && nodes_[i].name == name) return i;
  }
  return -1;
}

int Graph::findByBusId(int host, const std::string& busId) const {
  if (busId.empty()) return -1;
  for (int i = 0; i < size(); ++i) {
    if (nodes_[i].host == host && nodes_[i].busId == busId) return i;
  }
  return -1;
}

std::string Graph::hostName(int host) const {
  if (host >= 0 && host < static_cast<int>(hostNames_.size()) && !hostNames_[host].empty()) {
    return hostNames_[host];
  }
  return "host" + std::to_string(host);
}

void Graph::setHostName(int host, std::string name) {
  if (host < 0) return;
  if (static_cast<int>(hostNames_.size()) <= host) hostNames_.resize(host + 1);
  hostNames_[host] = std::move(name);
}

PciTree pciTree(const Graph& graph) {
  const int n = graph.size();
  PciTree tree;
  tree.parent.assign(n, -1);
  tree.children.assign(n, {});
  std::vector<bool> placed(n, false);
  std::vector<int> candidates = graph.nodesOfType(NodeType::kCpu);
  for (int node = 0; node < n; ++node) candidates.push_back(node);
  for (int root : candidates) {
    if (placed[root] || graph.node(root).type == NodeType::kNet) continue;
    placed[root] = true;
    tree.roots.push_back(root);
    std::vector<int> queue{root};
    for (size_t i = 0; i < queue.size(); ++i) {
      const int at = queue[i];
      for (const Link& link : graph.node(at).links) {
        const Node& to = graph.node(link.to);
        if (link.type != LinkType::kPci || placed[link.to] || to.type == NodeType::kNet ||
            to.type == NodeType::kCpu || to.host != graph.node(at).host) {
          continue;
        }
        placed[link.to] = true;
        tree.parent[link.to] = at;
        tree.children[at].push_back(link.to);
        queue.push_back(link.to);
      }
    }
  }
  return tree;
}

double pciBandwidthGBs(double gigaTransfers, int lanes) {
  const double encoding = gigaTransfers < 8.0 ? 8.0 / 10.0 : 128.0 / 130.0;
  return gigaTransfers * lanes * encoding / 8.0;
}

}  // namespace braid::topology
