// Plain network interfaces as Linux lists them in /sys/class/net: the ones
// the socket transport can use, with the PCI device behind each.
//
// hwloc already places the interfaces of PCI NICs in the PCI tree; this
// list adds what hwloc does not record (the link speed, the link layer) and
// the physical interfaces hwloc did not place. Virtual interfaces (lo,
// bridges, veth, ifb: those with no `device` link) are left out.
#pragma once

#include <string>
#include <vector>

namespace braid::topology {

struct NetInterface {
  std::string name;       ///< "eth0"
  std::string busId;      ///< its PCI device ("0000:00:03.0"), empty when not on PCI
  int numaNode = -1;      ///< of the PCI device, -1 when unknown
  double speedGbps = 0;   ///< /sys/class/net/X/speed in Gbit/s; 0 when the kernel does not know
  std::string linkLayer;  ///< "Ethernet" or "InfiniBand" (IPoIB), from the ARP hardware type
};

/// The physical network interfaces under `sysRoot` ("/sys" on a live system;
/// tests pass a made-up tree), sorted by name. A missing or unreadable
/// directory yields an empty list: a host may have no network at all.
std::vector<NetInterface> listNetInterfaces(const std::string& sysRoot = "/sys");

}  // namespace braid::topology
