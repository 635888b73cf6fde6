// Where each rank of a communicator runs, in terms of a graph: the device it
// works on (the GPU it drives, or the CPU node it runs on when it has no
// GPU). Transports and the ring/tree search read placements, never the
// environment.
#pragma once

#include <string>
#include <vector>

#include "topology/graph.h"

namespace braid::topology {

struct RankPlace {
  int host = 0;
  int device = -1;  ///< node index: a GPU, or a CPU for a rank on host memory

  bool operator==(const RankPlace& other) const {
    return host == other.host && device == other.device;
  }
};
using Placement = std::vector<RankPlace>;

/// What a rank knows of itself, gathered from every rank at communicator
/// creation: its host (an index into the graph's hosts), the PCI bus id of
/// its GPU (empty when it runs on host memory) and the NUMA node it runs on
/// (-1 when unknown).
struct RankLocation {
  int host = 0;
  std::string gpuBusId;
  int numaId = -1;
};

/// Places ranks where they say they run. A GPU rank goes on the GPU with its
/// bus id; a host-memory rank on the CPU of its NUMA node, or the host's
/// first CPU when that is unknown. Fails when a bus id or host is not in
/// the graph.
Result<Placement> placeRanks(const Graph& graph, const std::vector<RankLocation>& ranks);

/// The placement braid-topo and the tests model: on a graph with GPUs, rank
/// i drives GPU i, counting the GPUs host by host in CUDA index order; with
/// more ranks than GPUs, neighbouring ranks share a GPU. On a graph without
/// GPUs the ranks are split into equal blocks of consecutive ranks, one per
/// host, and dealt round-robin over each host's CPUs (NUMA nodes).
Result<Placement> placeRanksEvenly(const Graph& graph, int nranks);

/// The GPUs of `host` in CUDA index order (then bus id order).
std::vector<int> gpusInCudaOrder(const Graph& graph, int host);

/// The CPU node closest to `device`: itself for a CPU, else the CPU its
/// PCIe path leads to (-1 when it has none).
int cpuOf(const Graph& graph, int device);

}  // namespace braid::topology
