#include "topology/sysfs_nics.h"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <memory>

#include "topology/pci_bus_id.h"

namespace braid::topology {
namespace {

// ARP hardware types (linux/if_arp.h) of the interfaces a collective can use.
constexpr int kArpEther = 1;
constexpr int kArpInfiniband = 32;

/// The first integer in a sysfs file, or `fallback` when absent or unreadable
/// (reading `speed` of a link that is down fails with EINVAL).
long readLong(const std::string& path, long fallback) {
  std::ifstream file(path);
  long value = fallback;
  if (!(file >> value)) return fallback;
  return value;
}

struct DirCloser {
  void operator()(DIR* dir) const { closedir(dir); }
};

std::vector<std::string> directoryEntries(const std::string& path) {
  std::vector<std::string> names;
  std::unique_ptr<DIR, DirCloser> dir(opendir(path.c_str()));
  if (!dir) return names;
  while (dirent* entry = readdir(dir.get())) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<NetInterface> listNetInterfaces(const std::string& sysRoot) {
  std::vector<NetInterface> interfaces;
  const std::string classDir = sysRoot + "/class/net/";
  for (const std::string& name : directoryEntries(classDir)) {
    // Virtual interfaces (lo, docker0, veth*, ifb*) have no `device` link.
    std::string device = resolvedPath(classDir + name + "/device");
    if (device.empty()) continue;
    long arpType = readLong(classDir + name + "/type", kArpEther);
    if (arpType != kArpEther && arpType != kArpInfiniband) continue;

    NetInterface nic;
    nic.name = name;
    nic.busId = pciBusIdInSysfsPath(device);
    if (!nic.busId.empty()) nic.numaNode = pciNumaNode(sysRoot, nic.busId);
    long speedMbps = readLong(classDir + name + "/speed", -1);  // -1: unknown (virtio, link down)
    nic.speedGbps = speedMbps > 0 ? static_cast<double>(speedMbps) / 1000.0 : 0.0;
    nic.linkLayer = arpType == kArpInfiniband ? "InfiniBand" : "Ethernet";
    interfaces.push_back(std::move(nic));
  }
  return interfaces;
}

}  // namespace braid::topology
