// Members' point-to-point routes (members.h): which NIC each point-to-point and all-to-all FIFO
// of this rank to another host uses, where no ring or tree plans one; and the NICs BRAID_IB_HCA
// leaves out, kept out of every plan.
//
// Without this, such FIFOs went to `localRank % ports` over every port the process opened: a
// rank on the far socket used a NIC across the socket link, and on an 8-NIC machine two ranks
// could share one NIC while another stayed idle. Now each end takes the NIC the topology gives
// it (topology/net_routes.h): the receiver its own nearest, the sender its own nearest or, as
// NCCL's PXN, the receiver's rail.
#include <string>

#include "base/log.h"
#include "comm/members.h"
#include "topology/discover.h"
#include "topology/net_routes.h"
#include "transport/net/ib/hca_filter.h"

namespace braid::comm {

void Members::keepP2pRoutes(const topology::Graph& graph, const topology::Paths& paths,
                            const topology::TopologyPlan& plan) {
  if (plan.rankNics.size() != static_cast<size_t>(nranks) || plan.rankNics[rank] < 0) return;
  ownNic_ = graph.node(plan.rankNics[rank]).name;
  p2pSendNics_.assign(nranks, "");
  p2pSendHow_.assign(nranks, "");
  p2pRelays_.assign(nranks, -1);
  for (int peer = 0; peer < nranks; ++peer) {
    if (plan.placement[peer].host == plan.placement[rank].host) continue;
    const topology::P2pNetRoute route =
        topology::p2pSendRoute(graph, paths, plan.placement, plan.rankNics, rank, peer, plan.p2p);
    if (route.nic < 0) continue;
    p2pSendNics_[peer] = graph.node(route.nic).name;
    p2pSendHow_[peer] = topology::describeRoute(route);
    p2pRelays_[peer] = route.relayRank;
  }
}

std::string Members::p2pNic(int peer, bool sending, std::string* how) const {
  if (!sending) {
    *how = ownNic_.empty() ? "" : "(nearest)";
    return ownNic_;
  }
  if (peer < 0 || static_cast<size_t>(peer) >= p2pSendNics_.size()) {
    how->clear();
    return "";
  }
  *how = p2pSendHow_[peer];
  return p2pSendNics_[peer];
}

int Members::p2pRelay(int peer) const {
  if (peer < 0 || static_cast<size_t>(peer) >= p2pRelays_.size()) return -1;
  return p2pRelays_[peer];
}

void Members::leaveOutFilteredNics(const Config& config) {
  // A device BRAID_IB_HCA leaves out (a storage NIC beside the GPUs' own) carries no FIFO: the
  // verbs transport does not open it, so nothing may be planned on it either.
  if (config.ib.hca.empty() || !machine_) return;
  const transport::ib::HcaFilter filter(config.ib.hca);
  for (const std::string& name : topology::leaveOutRdmaPorts(
           *machine_, 0,
           [&](const std::string&device, int port) { return filter.allows(device, port); })) {
    BRAID_INFO("topology: %s left out by BRAID_IB_HCA=%s: nothing is planned on it", name.c_str(),
               config.ib.hca.c_str());
  }
}

}  // namespace braid::comm
