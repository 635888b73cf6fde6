// Which NIC a rank's point-to-point traffic to another host takes, and through which GPU: the
// choice NCCL makes for send/recv and all-to-all (its ncclTopoGetNetDev without a graph), as a
// pure function of the graph, so that it is planned, printed and tested like the rings.
//
// A rank receives on its own nearest NIC (assignNics: the nearest, shared out among the ranks
// that tie). Sending, it starts from its own nearest NIC too. Then, unless PXN is off and NICs
// may be crossed, it looks for the peer's rail: the GPU of its own host with the peer's GPU's
// index (CUDA order, as NCCL's nvmlDev), the NIC that GPU's rank would use, and the GPU nearest
// that NIC. With NCCL_CROSS_NIC=0 the send takes that NIC, whatever the path. With PXN (NCCL's
// default level 2) it takes it through the GPU nearest it, the relay, where that GPU is
// NVLink-connected to the sender (NVL) and at most PCIe switches (PXB) from the NIC: the data
// crosses NVLink, then leaves by the NIC beside the relay, on the receiver's rail. Level 1 does
// so only where the sender's own path to that NIC is worse than PXB ("where needed"); level 0 or
// NCCL_PXN_DISABLE=1, never. Ranks on host memory have no GPU index and keep their own NIC.
#pragma once

#include <string>
#include <vector>

#include "topology/graph.h"
#include "topology/paths.h"
#include "topology/placement.h"

namespace braid::topology {

struct P2pNetOptions {
  int crossNic = 2;  ///< NCCL_CROSS_NIC
  int pxnLevel = 2;  ///< NCCL_P2P_PXN_LEVEL: 0 never, 1 where needed, 2 wherever it can; 0
                     ///< when NCCL_PXN_DISABLE=1
};

/// How rank `from`'s point-to-point traffic leaves its host for rank `to`.
struct P2pNetRoute {
  int nic = -1;             ///< node: the NIC it leaves by; -1 where the host has none
  int relayRank = -1;       ///< PXN: the rank whose GPU hands it to `nic` over NVLink; -1: none
  bool railOfPeer = false;  ///< `nic` is the peer's rail's (not the sender's own nearest)
};

/// The route of `from`'s sends to `to` (on another host), given every rank's own NIC
/// (`rankNics`, assignNics).
P2pNetRoute p2pSendRoute(const Graph& graph, const Paths& paths, const Placement& placement,
                         const std::vector<int>& rankNics, int from, int to,
                         const P2pNetOptions& options);

/// "(nearest)", "(the peer's rail)" or "(the peer's rail; PXN relay: rank 3)", for the log.
std::string describeRoute(const P2pNetRoute& route);

}  // namespace braid::topology
