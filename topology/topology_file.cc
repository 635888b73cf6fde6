#include "topology/topology_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>

#include "topology/braid_xml.h"
#include "topology/discover.h"
#include "topology/hwloc_xml_guard.h"
#include "topology/nccl_xml.h"
#include "topology/xml_document.h"

namespace braid::topology {

Result<Graph> parseTopology(const std::string& text, const std::string& sourceName) {
  BRAID_ASSIGN_OR_RETURN(const std::unique_ptr<XmlDocument> document,
                         XmlDocument::parse(text, sourceName));
  const pugi::xml_node root = document->root();
  const std::string name = root.name();
  if (name == "braid-topology") return graphFromBraidXml(*document);
  if (name == "system") return graphFromNcclXml(*document);
  if (name == "topology") {
    BRAID_TRY(checkHwlocXml(*document));
    auto graph = parseHwlocXml(document->canonicalText());
    if (!graph.ok()) return graph.status().withContext(sourceName);
    return graph;
  }
  return document->error(root, "root element <" + name +
                                   "> is none of <braid-topology> (braid), <system> (NCCL) or "
                                   "<topology> (hwloc)");
}

Result<Graph> loadTopologyFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return invalidArgument("cannot open topology file " + path + ": " + strerror(errno));
  }
  // At most one byte past the limit, so that /dev/zero or a file that grows
  // is refused rather than read until memory runs out.
  std::string text;
  char buffer[1 << 16];
  while (text.size() <= kMaxXmlBytes && file.read(buffer, sizeof(buffer)).gcount() > 0) {
    text.append(buffer, static_cast<size_t>(file.gcount()));
  }
  if (file.bad()) {
    return systemError("cannot read topology file " + path + ": " + strerror(errno));
  }
  if (text.size() > kMaxXmlBytes) {
    return invalidArgument("topology file " + path + " is larger than the " +
                           std::to_string(kMaxXmlBytes >> 20) + " MiB a topology file may hold");
  }
  return parseTopology(text, path);
}

Status writeTopologyFile(const Graph& graph, const std::string& path) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return systemError("cannot write topology file " + path + ": " + strerror(errno));
  file << writeBraidXml(graph);
  file.close();
  if (!file) return systemError("cannot write topology file " + path);
  return Status::success();
}

Graph joinHosts(const std::vector<Graph>& graphs) {
  Graph joined;
  int net = -1;
  auto sharedNet = [&] {
    if (net < 0) {
      Node node;
      node.type = NodeType::kNet;
      node.host = -1;
      node.name = "net";
      net = joined.addNode(std::move(node));
    }
    return net;
  };
  std::set<std::string> names;
  int hostOffset = 0;
  for (const Graph& graph : graphs) {
    std::vector<int> index(graph.size(), -1);
    for (int i = 0; i < graph.size(); ++i) {
      if (graph.node(i).type == NodeType::kNet) {
        index[i] = sharedNet();
        continue;
      }
      Node node = graph.node(i);
      node.links.clear();
      node.host += hostOffset;
      index[i] = joined.addNode(std::move(node));
    }
    for (int i = 0; i < graph.size(); ++i) {
      for (const Link& link : graph.node(i).links) {
        // Each connection is stored at both ends; add it once.
        if (link.to > i) joined.connect(index[i], index[link.to], link.type, link.bandwidthGBs);
      }
    }
    for (int host = 0; host < graph.hostCount(); ++host) {
      const std::string name = graph.hostName(host);
      const std::string fallback = "host" + std::to_string(host);
      if (name != fallback && names.insert(name).second) {
        joined.setHostName(hostOffset + host, name);
      }
    }
    hostOffset += graph.hostCount();
  }
  for (int nic : joined.nodesOfType(NodeType::kNic)) {
    bool onNetwork = false;
    double pcieGBs = 0;
    for (const Link& link : joined.node(nic).links) {
      if (link.type == LinkType::kNet) onNetwork = true;
      if (link.type == LinkType::kPci) pcieGBs = link.bandwidthGBs;
    }
    if (onNetwork) continue;
    const double speed = netBandwidthGBs(joined.node(nic).speedGbps);
    joined.connect(nic, sharedNet(), LinkType::kNet, speed > 0 ? speed : pcieGBs);
  }
  return joined;
}

Result<Graph> obtainTopology(const std::string& topoFile, const std::string& dumpFile) {
  Result<Graph> graph = topoFile.empty() ? discoverTopology() : loadTopologyFile(topoFile);
  if (!graph.ok()) return graph;
  if (!dumpFile.empty()) BRAID_TRY(writeTopologyFile(graph.value(), dumpFile));
  return graph;
}

}  // namespace braid::topology
