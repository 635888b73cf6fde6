// The machine as a graph: what topology discovery (discover.h) or a
// topology file (topology_file.h) produces, and what path computation
// (paths.h), the transport choice (transport_choice.h) and the ring/tree
// search (search.h) read.
//
// Nodes are CPUs (one per NUMA node), PCI switches and host bridges, GPUs,
// NICs, NVSwitches, and one NET node per network that joins hosts. Links are
// directed (each connection is stored on both of its ends) and carry a type
// and a bandwidth in GB/s (bytes, not bits) in that direction. A graph may
// hold several hosts: every node says which host it belongs to, and hosts
// meet only at NET nodes, through their NICs.
//
// A discovered machine and the same machine read from a file must agree, so
// every producer of graphs uses the same bandwidth models (end of file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "braid/status.h"

namespace braid::topology {

enum class NodeType : uint8_t {
  kCpu,        ///< a NUMA node of a package: its cores and the host bridges under it
  kPciSwitch,  ///< a PCIe switch or bridge below a host bridge
  kGpu,
  kNic,       ///< a network port: an RDMA device port or a plain interface
  kNvSwitch,  ///< all NVSwitches of a host, as NCCL models them: one node
  kNet,       ///< the network between hosts
};

enum class LinkType : uint8_t {
  kNvLink,  ///< GPU-GPU or GPU-NVSwitch
  kPci,     ///< PCIe, including a CPU's host bridge to its devices
  kSys,     ///< between CPUs of one host (UPI, Infinity Fabric, QPI)
  kNet,     ///< NIC to the network
};

/// NCCL's path types, from closest to farthest; the order is meaningful
/// (BRAID_P2P_LEVEL compares against it).
enum class PathType : uint8_t {
  kLoc,  ///< the same device
  kNvl,  ///< NVLink, directly or through NVSwitch
  kNvb,  ///< NVLink through an intermediate GPU
  kPix,  ///< at most one PCIe switch
  kPxb,  ///< several PCIe switches, not through a host bridge
  kPhb,  ///< through a host bridge (the CPU of one NUMA node)
  kSys,  ///< across the link between CPUs
  kNet,  ///< across the network
  kDis,  ///< not connected
};
inline constexpr int kNumPathTypes = 9;

const char* nodeTypeName(NodeType type);  ///< "CPU", "PCI", "GPU", "NIC", "NVS", "NET"
const char* linkTypeName(LinkType type);  ///< "NVL", "PCI", "SYS", "NET"
const char* pathTypeName(PathType type);  ///< "LOC", "NVL", ..., "DIS"
/// Parses a path type name as NCCL_P2P_LEVEL takes it: a name (LOC, NVL, NVB,
/// PIX, PXB, PHB, SYS, NET, DIS; any case) or one of NCCL's legacy integers
/// (0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS; larger ones mean SYS, as in NCCL).
Result<PathType> parsePathType(const std::string& text);
/// Parses "NVL", "PCI", "SYS", "NET" (any case).
Result<LinkType> parseLinkType(const std::string& text);

struct Link {
  int to = -1;  ///< index of the node at the other end
  LinkType type = LinkType::kPci;
  double bandwidthGBs = 0;  ///< in this direction
};

struct Node {
  NodeType type = NodeType::kCpu;
  int host = 0;       ///< hosts are numbered 0..hostCount-1; NET nodes belong to none (-1)
  std::string name;   ///< for people: "cpu0", "gpu3", "mlx5_0:1", "eth0"
  std::string busId;  ///< PCI devices: "0000:17:00.0" (lower case); empty otherwise
  std::vector<Link> links;

  // CPU
  int numaId = -1;
  std::string cpuSet;     ///< the cores, as a list "0-15,32-47"
  std::string cpuVendor;  ///< "GenuineIntel", "AuthenticAMD", ... when known
  // GPU
  int cudaDevice = -1;  ///< index in the CUDA runtime's order, -1 if unknown
  int smVersion = 0;    ///< compute capability x 10 (90 for H100), 0 if unknown
  // NIC
  double speedGbps = 0;   ///< port speed in Gbit/s as the device reports it
  std::string linkLayer;  ///< "InfiniBand", "Ethernet"
  int port = 0;           ///< RDMA port number; 0 for a plain interface
  bool rdma = false;      ///< an RDMA (verbs) device port rather than a socket interface
};

/// The machine. Nodes never move once added: indices stay valid.
class Graph {
 public:
  int addNode(Node node);
  /// Links a and b both ways with the same type and bandwidth. Connecting a
  /// pair that already has a link of the same type adds the bandwidth to it:
  /// parallel links aggregate, as the NVLinks between two GPUs do.
  void connect(int a, int b, LinkType type, double bandwidthGBs);
  /// The link from a to b, or null when they are not adjacent.
  const Link* findLink(int a, int b) const;

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int index) const { return nodes_[index]; }
  Node& node(int index) { return nodes_[index]; }
  int size() const { return static_cast<int>(nodes_.size()); }
  /// Indices of the nodes of `type`, in the order they were added.
  std::vector<int> nodesOfType(NodeType type) const;
  /// The same, restricted to one host.
  std::vector<int> nodesOfType(NodeType type, int host) const;
  /// 1 + the largest host number of any node but NET nodes (0 when empty).
  int hostCount() const;
  /// The index of the node of `host` called `name`, or -1.
  int findByName(int host, const std::string& name) const;
  /// The index of the PCI device with this bus id on `host`, or -1.
  int findByBusId(int host, const std::string& busId) const;

  /// A host's name, for people ("dgx-a"); "host<i>" unless set.
  std::string hostName(int host) const;
  void setHostName(int host, std::string name);

 private:
  std::vector<Node> nodes_;
  std::vector<std::string> hostNames_;
};

/// The PCIe tree of a graph: from each CPU (in node order), then from any
/// node no CPU reached, down PCIe links to nodes not yet placed (breadth
/// first, links in order). NET nodes are in no tree. For printing and
/// writing the machine as people picture it.
struct PciTree {
  std::vector<int> parent;                 ///< by node; -1 for a root
  std::vector<std::vector<int>> children;  ///< by node
  std::vector<int> roots;                  ///< CPUs first
};
PciTree pciTree(const Graph& graph);

// --- Bandwidth models, in GB/s per direction (docs/topology.md) --------------
// The NVLink and socket-link models live with discovery (nvlink_graph.h
// nvLinkBandwidthGBs, hwloc_graph.h sysBandwidthGBs), which every producer
// of graphs shares.

/// A PCIe link of `lanes` lanes at `gigaTransfers` GT/s per lane, counted
/// as hwloc counts it (its `linkspeed`): the signalling rate less the line
/// encoding, 8b/10b below 8 GT/s and 128b/130b from there. Gen3 x16 is
/// 15.75 GB/s, Gen4 31.5, Gen5 63. Packet overheads take a further share of
/// every PCIe link alike, so comparisons between links are unaffected.
double pciBandwidthGBs(double gigaTransfers, int lanes);
/// A NIC port's share of the network: its line rate in bytes.
inline double netBandwidthGBs(double speedGbps) { return speedGbps / 8.0; }

}  // namespace braid::topology
