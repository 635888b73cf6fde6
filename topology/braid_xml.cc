#include "topology/braid_xml.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

namespace braid::topology {

namespace {

// `text` with &, <, >, " and ' written as entities: safe inside an attribute
// value quoted either way. Tabs and line ends too: a reader turns them into
// spaces where they stand as themselves in a value (XML's normalisation).
std::string xmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\t':
        out += "&#9;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

// Bandwidths and speeds to a thousandth (of a GB/s, of a Gbit/s), trailing
// zeros dropped: 31.508 rather than 31.50769230769231, for the people who
// read these files; far finer than any bandwidth is known. Any finite value
// fits, 1e300 included (its 301 digits once overflowed a fixed buffer).
std::string formatNumber(double value) {
  std::string out(static_cast<size_t>(snprintf(nullptr, 0, "%.3f", value)), '\0');
  snprintf(out.data(), out.size() + 1, "%.3f", value);
  out.erase(out.find_last_not_of('0') + 1);
  if (out.back() == '.') out.pop_back();
  return out;
}

const char* elementName(NodeType type) {
  switch (type) {
    case NodeType::kCpu:
      return "cpu";
    case NodeType::kPciSwitch:
      return "pci";
    case NodeType::kGpu:
      return "gpu";
    case NodeType::kNic:
      return "nic";
    case NodeType::kNvSwitch:
      return "nvswitch";
    case NodeType::kNet:
      return "net";
  }
  return "?";
}

class Writer {
 public:
  explicit Writer(const Graph& graph) : g_(graph), n_(graph.size()) {}

  std::string write() {
    labelHosts();
    buildTree();
    assignRefs();
    out_ += "<?xml version=\"1.0\"?>\n";
    out_ +=
        "<!-- braid topology: bandwidths in GB/s per direction, NIC speeds in Gbit/s; a\n"
        "     nested element's bw is its PCIe link to its parent. -->\n";
    out_ += "<braid-topology version=\"1\">\n";
    for (int host = 0; host < g_.hostCount(); ++host) writeHost(host);
    for (int node : byPlace_) {
      if (inNoHost(node)) out_ += "  " + startTag(node) + "/>\n";
    }
    for (int a : byPlace_) {
      for (const Link& link : g_.node(a).links) {
        const bool topLevel =
            inNoHost(a) || inNoHost(link.to) || g_.node(a).host != g_.node(link.to).host;
        if (place_[link.to] > place_[a] && topLevel) writeLink("  ", a, link, /*qualified=*/true);
      }
    }
    out_ += "</braid-topology>\n";
    return std::move(out_);
  }

 private:
  bool inNoHost(int node) const {
    return g_.node(node).type == NodeType::kNet || g_.node(node).host < 0;
  }

  // Host names must be unique and free of '/', which separates them from
  // node names at the top level.
  void labelHosts() {
    std::set<std::string> seen;
    for (int host = 0; host < g_.hostCount(); ++host) {
      std::string label = g_.hostName(host);
      if (label.empty() || label.find('/') != std::string::npos || seen.count(label) > 0) {
        label = "host" + std::to_string(host);
      }
      seen.insert(label);
      hostLabel_.push_back(label);
    }
  }

  // A node is referred to by its name where that is unique in its scope
  // (its host, or the top level for networks), else by an id made up here:
  // its place in the file, which is its index once the file is read back, so
  // that writing what was read gives the same file. Links are written in the
  // order of their ends' places for the same reason: read back, a node's links
  // are in file order, and a graph's indices are not its places.
  void assignRefs() {
    std::vector<int>& place = place_;
    place.assign(n_, -1);
    int next = 0;
    std::vector<int> stack;
    for (int host = 0; host < g_.hostCount(); ++host) {
      for (int root : rootOrder_) {
        if (g_.node(root).host != host) continue;
        stack.assign(1, root);
        while (!stack.empty()) {
          const int node = stack.back();
          stack.pop_back();
          place[node] = next++;
          stack.insert(stack.end(), children_[node].rbegin(), children_[node].rend());
        }
      }
    }
    for (int node = 0; node < n_; ++node) {
      if (place[node] < 0) place[node] = next++;
    }
    byPlace_.assign(n_, -1);
    for (int node = 0; node < n_; ++node) byPlace_[place[node]] = node;
    std::map<std::pair<int, std::string>, int> count;
    auto scope = [&](int node) { return inNoHost(node) ? -1 : g_.node(node).host; };
    for (int node = 0; node < n_; ++node) ++count[{scope(node), g_.node(node).name}];
    for (int node = 0; node < n_; ++node) {
      const std::string& name = g_.node(node).name;
      const bool unique = !name.empty() && count[{scope(node), name}] == 1 && name[0] != '#';
      ref_.push_back(unique ? name : "#" + std::to_string(place[node]));
    }
  }

  void buildTree() {
    PciTree tree = pciTree(g_);
    parent_ = std::move(tree.parent);
    children_ = std::move(tree.children);
    rootOrder_ = std::move(tree.roots);
  }

  std::string attribute(const char* key, const std::string& value) const {
    return std::string(" ") + key + "=\"" + xmlEscape(value) + "\"";
  }

  std::string startTag(int index) const {
    const Node& node = g_.node(index);
    std::string tag = std::string("<") + elementName(node.type);
    if (ref_[index][0] == '#') {
      tag += attribute("id", ref_[index].substr(1));
      if (!node.name.empty()) tag += attribute("name", node.name);
    } else {
      tag += attribute("name", node.name);
    }
    if (!node.busId.empty()) tag += attribute("busid", node.busId);
    if (node.numaId >= 0) tag += attribute("numa", std::to_string(node.numaId));
    if (!node.cpuSet.empty()) tag += attribute("cpus", node.cpuSet);
    if (!node.cpuVendor.empty()) tag += attribute("vendor", node.cpuVendor);
    if (node.cudaDevice >= 0) tag += attribute("cuda", std::to_string(node.cudaDevice));
    if (node.smVersion > 0) tag += attribute("sm", std::to_string(node.smVersion));
    if (node.speedGbps > 0) tag += attribute("speed", formatNumber(node.speedGbps));
    if (!node.linkLayer.empty()) tag += attribute("linklayer", node.linkLayer);
    if (node.port > 0) tag += attribute("port", std::to_string(node.port));
    if (node.rdma) tag += attribute("rdma", "1");
    if (parent_[index] >= 0) tag += attribute("bw", formatNumber(pciLink(index).bandwidthGBs));
    return tag;
  }

  // The PCI link from a nested node's parent, which its nesting stands for
  // (the pair may have links of other types too, written as <link>s).
  const Link& pciLink(int child) const {
    for (const Link& link : g_.node(parent_[child]).links) {
      if (link.to == child && link.type == LinkType::kPci) return link;
    }
    std::abort();  // pciTree nests a node only along a PCI link
  }

  void writeNode(int index, const std::string& indent) {
    out_ += indent + startTag(index);
    if (children_[index].empty()) {
      out_ += "/>\n";
      return;
    }
    out_ += ">\n";
    for (int child : children_[index]) writeNode(child, indent + "  ");
    out_ += indent + "</" + elementName(g_.node(index).type) + ">\n";
  }

  std::string qualifiedRef(int node) const {
    return inNoHost(node) ? ref_[node] : hostLabel_[g_.node(node).host] + "/" + ref_[node];
  }

  void writeLink(const std::string& indent, int a, const Link& link, bool qualified) {
    const std::string ra = qualified ? qualifiedRef(a) : ref_[a];
    const std::string rb = qualified ? qualifiedRef(link.to) : ref_[link.to];
    out_ += indent + "<link" + attribute("a", ra) + attribute("b", rb) +
            attribute("type", linkTypeName(link.type)) +
            attribute("bw", formatNumber(link.bandwidthGBs)) + "/>\n";
  }

  void writeHost(int host) {
    out_ += "  <host" + attribute("name", hostLabel_[host]) + ">\n";
    for (int root : rootOrder_) {
      if (g_.node(root).host == host) writeNode(root, "    ");
    }
    for (int a : byPlace_) {
      if (inNoHost(a) || g_.node(a).host != host) continue;
      for (const Link& link : g_.node(a).links) {
        const int b = link.to;
        const bool treeEdge = link.type == LinkType::kPci && (parent_[b] == a || parent_[a] == b);
        if (place_[b] > place_[a] && !inNoHost(b) && g_.node(b).host == host && !treeEdge) {
          writeLink("    ", a, link, /*qualified=*/false);
        }
      }
    }
    out_ += "  </host>\n";
  }

  const Graph& g_;
  const int n_;
  std::string out_;
  std::vector<std::string> hostLabel_;
  std::vector<std::string> ref_;  ///< a name, or "#<id>"
  std::vector<int> place_;        ///< a node's place in the file
  std::vector<int> byPlace_;      ///< the nodes in file order
  std::vector<int> parent_;
  std::vector<std::vector<int>> children_;
  std::vector<int> rootOrder_;
};

struct PendingLink {
  pugi::xml_node element;
  int host = -1;  ///< the host whose names it uses; -1 at the top level
};

class Reader {
 public:
  explicit Reader(const XmlDocument& document) : document_(document) {}

  Result<Graph> read() {
    const pugi::xml_node root = document_.root();
    if (std::string(root.name()) != "braid-topology") {
      return error(root, std::string("the root element is <") + root.name() +
                             ">, braid's is <braid-topology>");
    }
    BRAID_TRY(checkAttributes(root, {"version"}));
    const std::string version = attributeOr(root, "version", "1");
    if (version != "1") return error(root, "version " + version + " (this braid reads version 1)");
    for (const pugi::xml_node child : root.children()) {
      if (!isElement(child)) continue;
      const std::string name = child.name();
      if (name == "host") {
        BRAID_TRY(readHost(child));
      } else if (name == "net") {
        BRAID_TRY(checkAttributes(child, {"name", "id"}));
        Node net;
        net.type = NodeType::kNet;
        net.host = -1;
        net.name = attributeOr(child, "name", "");
        auto added = addNode(child, std::move(net), -1, -1, 0);
        if (!added.ok()) return added.status();
      } else if (name == "link") {
        links_.push_back(PendingLink{child, -1});
      } else {
        return error(child, "unexpected <" + name + "> in <braid-topology>");
      }
    }
    for (const PendingLink& link : links_) BRAID_TRY(readLink(link));
    return std::move(graph_);
  }

 private:
  Status error(const pugi::xml_node& element, const std::string& message) const {
    return document_.error(element, message);
  }

  Status checkAttributes(const pugi::xml_node& element,
                         const std::set<std::string>& allowed) const {
    for (const pugi::xml_attribute attribute : element.attributes()) {
      if (allowed.count(attribute.name()) == 0) {
        return error(element, std::string("<") + element.name() + "> has no attribute '" +
                                  attribute.name() + "'");
      }
    }
    return Status::success();
  }

  Result<int> intAttribute(const pugi::xml_node& element, const char* key, int fallback) const {
    const std::optional<std::string> text = attributeValue(element, key);
    if (!text) return fallback;
    char* end = nullptr;
    const long value = strtol(text->c_str(), &end, 10);
    if (text->empty() || *end != '\0' || value < 0 || value > 1000000000) {
      return error(element, std::string(key) + "='" + *text + "' is not a count");
    }
    return static_cast<int>(value);
  }

  Result<double> numberAttribute(const pugi::xml_node& element, const char* key) const {
    const std::optional<std::string> text = attributeValue(element, key);
    if (!text) return error(element, std::string("<") + element.name() + "> needs " + key + "=");
    char* end = nullptr;
    const double value = strtod(text->c_str(), &end);
    if (text->empty() || *end != '\0' || !std::isfinite(value) || value < 0) {
      return error(element, std::string(key) + "='" + *text + "' is not a bandwidth");
    }
    return value;
  }

  Status readHost(const pugi::xml_node& element) {
    BRAID_TRY(checkAttributes(element, {"name"}));
    const int host = static_cast<int>(hostRefs_.size());
    hostRefs_.emplace_back();
    const std::string name = attributeOr(element, "name", "host" + std::to_string(host));
    if (name.empty() || name.find('/') != std::string::npos || hostByName_.count(name) > 0) {
      return error(element, "host name '" + name + "' is empty, holds '/' or is taken");
    }
    hostByName_[name] = host;
    graph_.setHostName(host, name);
    for (const pugi::xml_node child : element.children()) {
      if (!isElement(child)) continue;
      if (std::string(child.name()) == "link") {
        links_.push_back(PendingLink{child, host});
      } else {
        BRAID_TRY(readNode(child, host, -1));
      }
    }
    return Status::success();
  }

  Result<NodeType> nodeType(const pugi::xml_node& element) const {
    const std::string name = element.name();
    for (NodeType type : {NodeType::kCpu, NodeType::kPciSwitch, NodeType::kGpu, NodeType::kNic,
                          NodeType::kNvSwitch}) {
      if (name == elementName(type)) return type;
    }
    return error(element, "unexpected <" + name + "> in a host");
  }

  Status readNode(const pugi::xml_node& element, int host, int parent) {
    BRAID_ASSIGN_OR_RETURN(const NodeType type, nodeType(element));
    BRAID_TRY(checkAttributes(element, {"name", "id", "busid", "numa", "cpus", "vendor", "cuda",
                                        "sm", "speed", "linklayer", "port", "rdma", "bw"}));
    Node node;
    node.type = type;
    node.host = host;
    node.name = attributeOr(element, "name", "");
    node.busId = attributeOr(element, "busid", "");
    BRAID_ASSIGN_OR_RETURN(node.numaId, intAttribute(element, "numa", -1));
    node.cpuSet = attributeOr(element, "cpus", "");
    node.cpuVendor = attributeOr(element, "vendor", "");
    BRAID_ASSIGN_OR_RETURN(node.cudaDevice, intAttribute(element, "cuda", -1));
    BRAID_ASSIGN_OR_RETURN(node.smVersion, intAttribute(element, "sm", 0));
    if (element.attribute("speed")) {
      BRAID_ASSIGN_OR_RETURN(node.speedGbps, numberAttribute(element, "speed"));
    }
    node.linkLayer = attributeOr(element, "linklayer", "");
    BRAID_ASSIGN_OR_RETURN(node.port, intAttribute(element, "port", 0));
    const std::string rdma = attributeOr(element, "rdma", "0");
    if (rdma != "0" && rdma != "1") return error(element, "rdma='" + rdma + "' (0 or 1)");
    node.rdma = rdma == "1";
    double bandwidth = 0;
    if (parent >= 0) {
      BRAID_ASSIGN_OR_RETURN(bandwidth, numberAttribute(element, "bw"));
    } else if (element.attribute("bw")) {
      return error(element, "bw= belongs on elements nested in a <cpu> or <pci>");
    }
    BRAID_ASSIGN_OR_RETURN(const int index,
                           addNode(element, std::move(node), host, parent, bandwidth));
    for (const pugi::xml_node child : element.children()) {
      if (isElement(child)) BRAID_TRY(readNode(child, host, index));
    }
    return Status::success();
  }

  Result<int> addNode(const pugi::xml_node& element, Node node, int host, int parent, double bw) {
    std::map<std::string, int>& refs = host >= 0 ? hostRefs_[host] : netRefs_;
    const std::optional<std::string> id = attributeValue(element, "id");
    const std::string ref = id ? "#" + *id : node.name;
    if (ref.empty()) return error(element, std::string("<") + element.name() + "> needs a name");
    if (refs.count(ref) > 0) return error(element, "'" + ref + "' names two nodes");
    const int index = graph_.addNode(std::move(node));
    refs[ref] = index;
    if (parent >= 0) graph_.connect(parent, index, LinkType::kPci, bw);
    return index;
  }

  // A node reference inside host `host`, or at the top level (-1):
  // "host/name", or the name of a network.
  Result<int> resolve(const pugi::xml_node& element, const std::string& ref, int host) const {
    std::string local = ref;
    int scope = host;
    if (host < 0) {
      const size_t slash = ref.find('/');
      if (slash != std::string::npos) {
        const auto found = hostByName_.find(ref.substr(0, slash));
        if (found == hostByName_.end())
          return error(element, "no host called '" + ref.substr(0, slash) + "'");
        scope = found->second;
        local = ref.substr(slash + 1);
      }
    }
    const std::map<std::string, int>& refs = scope >= 0 ? hostRefs_[scope] : netRefs_;
    const auto found = refs.find(local);
    if (found == refs.end()) return error(element, "no node called '" + ref + "'");
    return found->second;
  }

  Status readLink(const PendingLink& pending) {
    const pugi::xml_node& element = pending.element;
    BRAID_TRY(checkAttributes(element, {"a", "b", "type", "bw"}));
    const std::optional<std::string> a = attributeValue(element, "a");
    const std::optional<std::string> b = attributeValue(element, "b");
    const std::optional<std::string> type = attributeValue(element, "type");
    if (!a || !b || !type) {
      return error(element, "<link> needs a=, b=, type= and bw=");
    }
    BRAID_ASSIGN_OR_RETURN(const int from, resolve(element, *a, pending.host));
    BRAID_ASSIGN_OR_RETURN(const int to, resolve(element, *b, pending.host));
    if (from == to) return error(element, "a link from '" + *a + "' to itself");
    auto linkType = parseLinkType(*type);
    if (!linkType.ok()) return error(element, linkType.status().message());
    BRAID_ASSIGN_OR_RETURN(const double bw, numberAttribute(element, "bw"));
    graph_.connect(from, to, linkType.value(), bw);
    return Status::success();
  }

  const XmlDocument& document_;
  Graph graph_;
  std::vector<std::map<std::string, int>> hostRefs_;
  std::map<std::string, int> netRefs_;
  std::map<std::string, int> hostByName_;
  std::vector<PendingLink> links_;
};

}  // namespace

std::string writeBraidXml(const Graph& graph) { return Writer(graph).write(); }

Result<Graph> graphFromBraidXml(const XmlDocument& document) { return Reader(document).read(); }

}  // namespace braid::topology
