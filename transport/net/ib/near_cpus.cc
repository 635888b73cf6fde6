#include "transport/net/ib/near_cpus.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <fstream>

#include "topology/cpu_affinity.h"

namespace braid::transport::ib {
namespace {

std::string firstLine(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

}  // namespace

std::vector<int> cpusNearDevice(const std::string& sysfsRoot, const std::string& device,
                                const std::vector<int>& allowed) {
  const std::string node =
      firstLine(sysfsRoot + "/class/infiniband/" + device + "/device/numa_node");
  if (node.empty() || node[0] == '-' || node.find_first_not_of("0123456789") != std::string::npos) {
    return {};
  }
  Result<std::vector<int>> cpus = topology::parseCpuList(
      firstLine(sysfsRoot + "/devices/system/node/node" + node + "/cpulist"));
  if (!cpus.ok()) return {};
  std::vector<int> near;
  for (int cpu : cpus.value()) {
    if (std::find(allowed.begin(), allowed.end(), cpu) != allowed.end()) near.push_back(cpu);
  }
  return near;
}

bool bindThisThread(const std::vector<int>& cpus) {
  if (cpus.empty()) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  }
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

}  // namespace braid::transport::ib
