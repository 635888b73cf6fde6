// A communicator whose ranks span hosts: what changes when some peers are on the network.
//
// Ranks on one host keep the shm FIFOs between them; a FIFO to or from a rank on another host is
// a socket FIFO (transport/net/socket_fifo.h) made the first time a schedule needs it, through
// this rank's listener (transport/net/socket_rendezvous.h), which listens on the interface the
// bootstrap uses (BRAID_SOCKET_IFNAME). A GPU communicator's FIFO to another host is a GPU FIFO
// in pinned host memory with a proxy at its other side (transport/net/gpu_socket_fifo.h,
// comm_gpu_links.cc). Only the Simple protocol crosses hosts: LL's cells and the one-shot board
// are memory a peer reads directly, which another host cannot.
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "comm_impl.h"
#include "transport/net/socket_fifo.h"
#include "util/log.h"

namespace braid {

std::vector<int> Comm::Impl::hostNumbers() const {
  std::vector<int> hostOf(nranks, -1);
  int hosts = 0;
  for (int r = 0; r < nranks; ++r) {
    for (int q = 0; q < r && hostOf[r] < 0; ++q) {
      if (!onOtherHostThan(r, q)) hostOf[r] = hostOf[q];
    }
    if (hostOf[r] < 0) hostOf[r] = hosts++;
  }
  return hostOf;
}

Status Comm::Impl::checkCrossesHosts(algo::Protocol protocol,
                                     const std::set<std::pair<int, int>>& recv,
                                     const std::set<std::pair<int, int>>& send) const {
  // Simple is the only other protocol.
  if (protocol == algo::Protocol::kSimple || !spansHosts()) return Status::success();
  for (const auto* pairs : {&recv, &send}) {
    for (const auto& [channel, peer] : *pairs) {
      if (onOtherHost(peer)) {
        return invalidUsage("the LL protocol does not cross hosts yet (rank " +
                            std::to_string(peer) + " is on another host)");
      }
    }
  }
  return Status::success();
}

Status Comm::Impl::connectNetwork() {
  if (!config.transportAllowed("socket")) {
    return invalidUsage("ranks run on several hosts but BRAID_TRANSPORTS=" + config.transports +
                        " excludes socket, the transport between hosts");
  }
  BRAID_ASSIGN_OR_RETURN(net, transport::net::SocketRendezvous::create(bootstrap->localAddress()));
  netAddresses.assign(nranks, sockaddr_storage{});
  netAddresses[rank] = net->address();
  BRAID_TRY(bootstrap->allGather(netAddresses.data(), sizeof(sockaddr_storage))
                .withContext("exchanging the socket transport's addresses"));
  const std::vector<int> hostOf = hostNumbers();
  const int hosts = *std::max_element(hostOf.begin(), hostOf.end()) + 1;
  if (!allowed.protocol[static_cast<int>(algo::Protocol::kSimple)]) {
    return invalidUsage("BRAID_PROTO excludes simple, the only protocol between hosts");
  }
  if (allowed.protocol[static_cast<int>(algo::Protocol::kLl)] && !config.proto.empty()) {
    BRAID_WARN("BRAID_PROTO=%s: LL does not cross hosts yet; this communicator runs Simple",
               config.proto.c_str());
  }
  allowed.protocol[static_cast<int>(algo::Protocol::kLl)] = false;
  allowed.algorithm[static_cast<int>(algo::Algorithm::kOneShot)] = false;
  BRAID_INFO("network: %d hosts; socket transport listening on %s", hosts,
             braid::net::addressToString(net->address()).c_str());
  return Status::success();
}

transport::net::SocketConnector Comm::Impl::socketConnector(
    const transport::net::Greeting& greeting) const {
  transport::net::SocketRendezvous* rendezvous = net.get();
  const int64_t timeoutMs = config.timeoutMs;
  return [rendezvous, greeting, timeoutMs](const std::atomic<bool>& stop) {
    return rendezvous->accept(greeting, Deadline::afterMs(timeoutMs), &stop);
  };
}

Result<braid::net::Socket> Comm::Impl::connectSocket(int peer,
                                                     const transport::net::Greeting& greeting) {
  return net->connect(netAddresses[peer], greeting, Deadline::afterMs(config.timeoutMs));
}

Result<std::unique_ptr<transport::RecvEnd>> Comm::Impl::awaitSocketFifo(
    int peer, const transport::net::Greeting& greeting, size_t slotBytes) {
  return transport::net::openSocketRecvEnd(socketConnector(greeting), slotBytes, peer);
}

Result<std::unique_ptr<transport::SendEnd>> Comm::Impl::connectSocketFifo(
    int peer, const transport::net::Greeting& greeting, size_t slotBytes) {
  BRAID_ASSIGN_OR_RETURN(braid::net::Socket socket, connectSocket(peer, greeting));
  return transport::net::openSocketSendEnd(std::move(socket), slotBytes, peer);
}

}  // namespace braid
