// One hwloc topology -> one host of the Graph. The live discovery and the
// reading of an `lstopo --of xml` file both end here, so both give the same
// graph for the same machine.
//
//   NUMA node with cores         -> kCpu (numaId, cpuSet, cpuVendor)
//   CPU <-> CPU of one host      -> kSys link
//   host bridge                  -> none: its devices hang off the CPU
//   PCIe switch (two bridges)    -> kPciSwitch (see docs/topology-discovery.md)
//   NVIDIA 3D/VGA controller, or a CUDA device's bus id -> kGpu
//   network class, or a network / OpenFabrics OS device  -> kNic, one per
//                                   RDMA port and one per plain interface
//   NVIDIA "other bridge" (0x0680) -> the host's kNvSwitch node
//
// Everything else, and bridges with nothing of the above below them, is
// left out.
#pragma once

#include <string>
#include <vector>

#include "braid/status.h"
#include "topology/cuda_gpus.h"
#include "topology/graph.h"
#include "topology/sysfs_nics.h"
#include "topology/verbs_nics.h"

struct hwloc_topology;  // hwloc_topology_t points to it

namespace braid::topology {

/// What the running system tells beyond hwloc. Empty when the topology was
/// read from a file: the CUDA devices, RDMA ports and interfaces of this
/// process say nothing about another machine.
struct HostFacts {
  /// True for the running system: a NIC-class device without an OS device
  /// is then unusable and left out. In a file it still shows as a NIC.
  bool liveSystem = false;
  std::vector<CudaGpu> cudaGpus;
  std::vector<VerbsPort> verbsPorts;
  std::vector<NetInterface> netInterfaces;
};

/// PCI ids discovery recognises.
constexpr unsigned kVendorNvidia = 0x10de;
constexpr unsigned kVendorMellanox = 0x15b3;
constexpr unsigned kClassEthernet = 0x0200;
constexpr unsigned kClassInfiniband = 0x0207;
constexpr unsigned kClassVga = 0x0300;
constexpr unsigned kClass3d = 0x0302;
constexpr unsigned kClassOtherBridge = 0x0680;

/// GB/s assumed for a PCIe link whose speed hwloc does not know (virtual
/// machines, files without it): PCIe Gen3 x16, 8 GT/s x 16 lanes with
/// 128b/130b encoding, the slowest link a GPU server uses today.
constexpr double kUnknownPciGBs = 15.75;

enum class PciRole { kNone, kGpu, kNic, kNvSwitch };

/// What a PCI device becomes in the graph. `classId` is the 16-bit class and
/// subclass (0x0302); `isCudaDevice`: its bus id is one of the CUDA
/// runtime's; `hasNetworkOsDevice`: hwloc found a network or OpenFabrics
/// device on it.
PciRole classifyPciDevice(unsigned vendorId, unsigned classId, bool isCudaDevice,
                          bool hasNetworkOsDevice);

/// GB/s of a kSys link from a CPU of `cpuVendor`, the figures NCCL's
/// topology model uses for the socket interconnect: 16 for AMD (Infinity
/// Fabric), 10 for Intel (UPI) and anything else.
double sysBandwidthGBs(const std::string& cpuVendor);

/// Builds host 0 from a loaded topology, plus the devices in `facts` that
/// hwloc did not place (attached to the CPU of their NUMA node, or the
/// first CPU). Fails only on a topology with no CPU at all.
Result<Graph> graphFromHwloc(hwloc_topology* topology, const HostFacts& facts);

}  // namespace braid::topology
