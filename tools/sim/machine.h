// The machine braid-sim times schedules on: nodes of GPUs joined by NVLink
// inside a node and by NICs between nodes.
//
// Ranks fill nodes in order (rank r is GPU r % gpus of node r / gpus). Each
// GPU has one NVLink port to the node's switch with `nvlink` bandwidth in
// each direction; each node has `nics` NICs with `net` bandwidth in each
// direction. A message between two GPUs of a node takes the sender's NVLink
// port out and the receiver's in; between nodes, a NIC out of the sender's
// node and one into the receiver's. Which NIC: channel c of local GPU g uses
// NIC (g + c) % nics (scaled to the NIC count when nics < gpus), so that the
// channels of a ring leave a node through different NICs, as NCCL's
// rail-spread rings (and PXN) do; braid's ring uses one rank order for every
// channel, so without this all channels would share one NIC.
#pragma once

#include <string>

#include "braid/status.h"

namespace braid::sim {

struct Machine {
  int nodes = 1;
  int gpusPerNode = 8;
  int nicsPerNode = 8;
  double nvlinkBytesPerUs = 450e3;  ///< 450 GB/s per direction per GPU
  double netBytesPerUs = 50e3;      ///< 400 Gb/s per direction per NIC
  double nvlinkLatencyUs = 1;       ///< per hop inside a node
  double netLatencyUs = 5;          ///< per hop between nodes
  /// Hop latencies with the LL protocol, whose lines carry their own flags
  /// (no separate flag write to wait for); negative means as Simple's.
  double nvlinkLatencyLlUs = -1;
  double netLatencyLlUs = -1;

  int ranks() const { return nodes * gpusPerNode; }
  int nodeOf(int rank) const { return rank / gpusPerNode; }
  int localOf(int rank) const { return rank % gpusPerNode; }
  /// The NIC (0..nicsPerNode-1 of its node) that `rank` uses on `channel`.
  int nicOf(int rank, int channel) const {
    const int spread = (localOf(rank) + channel) % gpusPerNode;
    return spread * nicsPerNode / gpusPerNode;
  }
  bool sameNode(int a, int b) const { return nodeOf(a) == nodeOf(b); }
};

/// Parses "512x8,nvlink=450GB/s,net=400Gb/s,nvlink-lat=1us,net-lat=5us,nics=8"
/// (also nvlink-lat-ll=, net-lat-ll=): an optional NODESxGPUS first, then
/// key=value pairs in any order; what is not given keeps its default.
Result<Machine> parseMachine(const std::string& text);

/// One line: "512 nodes x 8 GPUs, NVLink 450.00 GB/s (1.00 us), 8 NICs x 50.00 GB/s (5.00 us)".
std::string describeMachine(const Machine& machine);

/// The default machine for `nranks`: nodes of 8 GPUs (fewer if nranks < 8),
/// enough of them to hold every rank.
Machine defaultMachine(int nranks);

}  // namespace braid::sim
