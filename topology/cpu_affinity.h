// Which CPU node of the topology a host-memory rank runs on, from the CPUs
// the operating system lets it use. A rank pinned to one socket (mpirun
// --bind-to socket or core, taskset, braid-perf --bind core) is placed on
// that socket's CPU node, so the ring search can keep its neighbours on the
// same side of the socket link; an unpinned rank stays unknown.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "braid/status.h"
#include "topology/graph.h"

namespace braid::topology {

/// The CPUs of a Linux list such as "0-3,8,10-11" (cpuset.cpus, hwloc's
/// bitmap list, the cpus= attribute of braid's XML), ascending, each once.
Result<std::vector<int>> parseCpuList(const std::string& list);

/// The CPUs this thread may run on (sched_getaffinity); empty when the call fails.
std::vector<int> allowedCpus();

/// A set of CPUs as a fixed-size bitmask (CPU_SETSIZE bits), so that it can travel in the
/// table of ranks the bootstrap gathers: each rank says where it may run, and the ranks of a
/// host learn whether they have a core each (Members::coresOfHost).
struct CpuMask {
  static constexpr int kBits = 1024;
  uint64_t words[kBits / 64] = {};

  /// A mask of `cpus`; CPUs at or past kBits are left out.
  static CpuMask of(const std::vector<int>& cpus);
  bool empty() const { return count() == 0; }
  int count() const;
  CpuMask& operator|=(const CpuMask& other);
  bool operator==(const CpuMask& other) const {
    return std::equal(std::begin(words), std::end(words), std::begin(other.words));
  }
};

/// The NUMA id of the CPU node of `host` whose cores hold every one of
/// `cpus`; -1 when `cpus` is empty, spans several nodes, or a node's core
/// list is missing or malformed (nothing is then known of where it runs).
int numaOfCpus(const Graph& graph, int host, std::vector<int> cpus);

}  // namespace braid::topology
