#include "topology/nvlink_graph.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

namespace braid::topology {
namespace {

int findGpu(const Graph& graph, int host, const std::string& busId) {
  int index = graph.findByBusId(host, busId);
  return index >= 0 && graph.node(index).type == NodeType::kGpu ? index : -1;
}

int nvSwitchNode(Graph& graph, int host) {
  for (int index : graph.nodesOfType(NodeType::kNvSwitch)) {
    if (graph.node(index).host == host) return index;
  }
  Node nvSwitch;
  nvSwitch.type = NodeType::kNvSwitch;
  nvSwitch.host = host;
  nvSwitch.name = "nvswitch";
  return graph.addNode(std::move(nvSwitch));
}

}  // namespace

double nvLinkBandwidthGBs(int smVersion) {
  // Per link and direction, from NVIDIA's published totals: P100 4 links
  // 160 GB/s both ways, V100 6 links 300, A100 12 links 600, A40/RTX 3090
  // 4 links 112.5, H100 18 links 900, B200 18 links 1800.
  if (smVersion >= 100) return 50.0;
  if (smVersion >= 90) return 25.0;
  if (smVersion == 86) return 14.0625;
  if (smVersion >= 70) return 25.0;
  return 20.0;
}

int addNvLinks(Graph& graph, const std::vector<GpuNvLinks>& gpus) {
  constexpr int kHost = 0;  // NVML describes the host discovery runs on
  int added = 0;
  std::set<std::pair<int, int>> joinedGpus;  // each GPU pair reports its links from both ends
  for (const GpuNvLinks& gpu : gpus) {
    int local = findGpu(graph, kHost, gpu.busId);
    if (local < 0) continue;
    if (graph.node(local).smVersion == 0) graph.node(local).smVersion = gpu.smVersion;
    const double perLink = nvLinkBandwidthGBs(graph.node(local).smVersion);
    for (const NvLinkPeer& peer : gpu.peers) {
      int remote = -1;
      if (peer.type == NvLinkPeerType::kGpu) {
        remote = findGpu(graph, kHost, peer.busId);
        if (remote < 0 || remote == local) continue;
        if (!joinedGpus.insert({std::min(local, remote), std::max(local, remote)}).second) {
          continue;
        }
      } else if (peer.type == NvLinkPeerType::kNvSwitch) {
        // Links to several NVSwitch chips add up on the host's one NVSwitch node.
        remote = nvSwitchNode(graph, kHost);
      } else {
        continue;
      }
      if (graph.findLink(local, remote) == nullptr) ++added;
      graph.connect(local, remote, LinkType::kNvLink, perLink * peer.links);
    }
  }
  return added;
}

}  // namespace braid::topology
