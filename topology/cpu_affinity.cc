#include "topology/cpu_affinity.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>

namespace braid::topology {
namespace {

// A non-negative decimal number, all of `text`.
bool parseIndex(const std::string& text, int* out) {
  if (text.empty() || text.size() > 7) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  *out = std::atoi(text.c_str());
  return true;
}

}  // namespace

Result<std::vector<int>> parseCpuList(const std::string& list) {
  std::vector<int> cpus;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    const size_t dash = item.find('-');
    int first = 0, last = 0;
    const bool ok = dash == std::string::npos
                        ? parseIndex(item, &first) && parseIndex(item, &last)
                        : parseIndex(item.substr(0, dash), &first) &&
                              parseIndex(item.substr(dash + 1), &last) && first <= last;
    if (!ok) {
      return invalidArgument("CPU list \"" + list + "\": \"" + item +
                             "\" is not a CPU number or a range N-M with N <= M");
    }
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    start = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

CpuMask CpuMask::of(const std::vector<int>& cpus) {
  CpuMask mask;
  for (int cpu : cpus) {
    if (cpu >= 0 && cpu < kBits) mask.words[cpu / 64] |= uint64_t{1} << (cpu % 64);
  }
  return mask;
}

int CpuMask::count() const {
  int n = 0;
  for (uint64_t w : words) n += __builtin_popcountll(w);
  return n;
}

CpuMask& CpuMask::operator|=(const CpuMask& other) {
  for (int i = 0; i < kBits / 64; ++i) words[i] |= other.words[i];
  return *this;
}

int numaOfCpus(const Graph& graph, int host, std::vector<int> cpus) {
  if (cpus.empty()) return -1;
  std::sort(cpus.begin(), cpus.end());
  for (int index : graph.nodesOfType(NodeType::kCpu, host)) {
    const Node& node = graph.node(index);
    Result<std::vector<int>> cores = parseCpuList(node.cpuSet);
    if (!cores.ok()) continue;
    if (std::includes(cores.value().begin(), cores.value().end(), cpus.begin(), cpus.end())) {
      return node.numaId;
    }
  }
  return -1;
}

}  // namespace braid::topology
