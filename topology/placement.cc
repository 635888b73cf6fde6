#include "topology/placement.h"

#include <algorithm>
#include <deque>

namespace braid::topology {

namespace {

std::vector<int> cpusInNumaOrder(const Graph& graph, int host) {
  std::vector<int> cpus = graph.nodesOfType(NodeType::kCpu, host);
  std::stable_sort(cpus.begin(), cpus.end(),
                   [&](int a, int b) { return graph.node(a).numaId < graph.node(b).numaId; });
  return cpus;
}

}  // namespace

std::vector<int> gpusInCudaOrder(const Graph& graph, int host) {
  std::vector<int> gpus = graph.nodesOfType(NodeType::kGpu, host);
  std::stable_sort(gpus.begin(), gpus.end(), [&](int a, int b) {
    const Node& x = graph.node(a);
    const Node& y = graph.node(b);
    // Unknown indices (-1) go last.
    const unsigned ix = static_cast<unsigned>(x.cudaDevice);
    const unsigned iy = static_cast<unsigned>(y.cudaDevice);
    if (ix != iy) return ix < iy;
    return x.busId < y.busId;
  });
  return gpus;
}

int cpuOf(const Graph& graph, int device) {
  std::vector<bool> seen(graph.size(), false);
  std::deque<int> queue{device};
  seen[device] = true;
  while (!queue.empty()) {
    const int at = queue.front();
    queue.pop_front();
    if (graph.node(at).type == NodeType::kCpu) return at;
    for (const Link& link : graph.node(at).links) {
      if (link.type != LinkType::kPci || seen[link.to]) continue;
      seen[link.to] = true;
      queue.push_back(link.to);
    }
  }
  return -1;
}

Result<Placement> placeRanks(const Graph& graph, const std::vector<RankLocation>& ranks) {
  Placement placement;
  const int hosts = graph.hostCount();
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    const RankLocation& where = ranks[rank];
    const std::string who = "rank " + std::to_string(rank);
    if (where.host < 0 || where.host >= hosts) {
      return invalidArgument(who + " is on host " + std::to_string(where.host) +
                             ", but the topology has " + std::to_string(hosts) + " host(s)");
    }
    RankPlace place;
    place.host = where.host;
    if (!where.gpuBusId.empty()) {
      place.device = graph.findByBusId(where.host, where.gpuBusId);
      if (place.device < 0 || graph.node(place.device).type != NodeType::kGpu) {
        return invalidArgument(who + " drives the GPU at " + where.gpuBusId + ", which " +
                               graph.hostName(where.host) + "'s topology does not hold");
      }
    } else {
      const std::vector<int> cpus = cpusInNumaOrder(graph, where.host);
      if (cpus.empty()) {
        return invalidArgument(who + ": " + graph.hostName(where.host) + " has no CPU node");
      }
      place.device = cpus.front();
      for (int cpu : cpus) {
        if (graph.node(cpu).numaId == where.numaId) place.device = cpu;
      }
    }
    placement.push_back(place);
  }
  return placement;
}

Result<Placement> placeRanksEvenly(const Graph& graph, int nranks) {
  if (nranks < 1)
    return invalidArgument("nranks must be at least 1, got " + std::to_string(nranks));
  const int hosts = graph.hostCount();
  if (hosts == 0) return invalidArgument("the topology has no host");
  std::vector<int> gpus;
  for (int host = 0; host < hosts; ++host) {
    for (int gpu : gpusInCudaOrder(graph, host)) gpus.push_back(gpu);
  }
  Placement placement(nranks);
  if (!gpus.empty()) {
    const int total = static_cast<int>(gpus.size());
    const int perGpu = (nranks + total - 1) / total;
    for (int rank = 0; rank < nranks; ++rank) {
      const int gpu = gpus[rank / perGpu];
      placement[rank] = RankPlace{graph.node(gpu).host, gpu};
    }
    return placement;
  }
  int rank = 0;
  for (int host = 0; host < hosts; ++host) {
    const int count = nranks / hosts + (host < nranks % hosts ? 1 : 0);
    const std::vector<int> cpus = cpusInNumaOrder(graph, host);
    if (cpus.empty()) return invalidArgument(graph.hostName(host) + " has no CPU node");
    for (int local = 0; local < count; ++local, ++rank) {
      placement[rank] = RankPlace{host, cpus[local % cpus.size()]};
    }
  }
  return placement;
}

}  // namespace braid::topology
