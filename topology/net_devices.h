// Where a network plugin's devices are on the machine, and which one a rank uses.
//
// A plugin says where each of its devices is by the sysfs path of its PCI function
// (ncclNetProperties_t's pciPath, "/sys/devices/pci0000:00/0000:00:01.0/0000:05:00.0"), whose
// last component is the function's bus ID. A device whose bus ID is a node of the rank's host is
// on the topology; each rank then takes the device nearest its GPU (or its CPU), as NCCL gives a
// GPU the NIC nearest to it, and ranks to which several devices are equally near go round them.
#pragma once

#include <string>
#include <vector>

#include "topology/graph.h"
#include "topology/paths.h"

namespace braid::topology {

/// The PCI bus ID a sysfs path ends in, lower case ("0000:05:00.0"); empty where the path's last
/// component is not one (a virtual device, an empty path).
std::string busIdOfPciPath(const std::string& path);

/// The device of `busIds` (one per device of the plugin; empty where unknown) that a rank at node
/// `from` of `graph` is nearest to: the best path (betterPath) from `from` to the node with that
/// bus ID on the same host; among equally near devices the `spread`-th modulo their number.
/// -1 where none of the devices is a node of the host. `type`, where given, gets the path's type
/// (what NCCL_NET_GDR_LEVEL is held to where `from` is a GPU).
int nearestNetDevice(const Graph& graph, const Paths& paths, int from,
                     const std::vector<std::string>& busIds, int spread, PathType* type = nullptr);

}  // namespace braid::topology
