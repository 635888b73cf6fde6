// A communicator whose ranks span hosts: what changes when some peers are on the network.
//
// Ranks on one host keep the shm FIFOs between them; a FIFO to or from a rank on another host is
// a network FIFO made the first time a schedule needs it. Every rank listens on the interface
// the bootstrap uses (BRAID_SOCKET_IFNAME; transport/net/socket_rendezvous.h) and a FIFO's two
// ends meet on a connection to the receiver's listener. Over that connection either the bytes
// flow (the socket transport, transport/net/socket_fifo.h) or the two ends trade the addresses
// of their queue pairs and the bytes go by RDMA (the verbs transport, transport/net/ib), which
// is chosen wherever every rank has an active verbs port, unless BRAID_NET=Socket. A GPU
// communicator's FIFO to another host is a GPU FIFO in pinned host memory with a proxy at its
// other side (comm_gpu_links.cc). Only the Simple protocol crosses hosts: LL's cells and the
// one-shot board are memory a peer reads directly, which another host cannot.
#include <strings.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "comm_impl.h"
#include "transport/net/gpu_socket_fifo.h"
#include "transport/net/ib/gpu_ib_fifo.h"
#include "transport/net/ib/ib_fifo.h"
#include "transport/net/socket_fifo.h"

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

int Comm::Impl::localRank() const {
  int before = 0;
  for (int r = 0; r < rank; ++r) before += onOtherHost(r) ? 0 : 1;
  return before;
}

Status Comm::Impl::chooseNetTransport() {
  const bool forceSocket = strcasecmp(config.net.c_str(), "Socket") == 0;
  const bool forceIb = strcasecmp(config.net.c_str(), "IB") == 0;
  std::string why;
  if (forceSocket) {
    why = "BRAID_NET=" + config.net;
  } else if (!config.verbsAllowed()) {
    why = "BRAID_TRANSPORTS=" + config.transports + " excludes ibverbs";
  } else {
    BRAID_ASSIGN_OR_RETURN(ib, transport::ib::IbNetwork::open(config.ib, localRank(), &why));
    if (ib) ib->stopDrainsWhen(stop.get());
  }
  // Both ends of a FIFO must run the same transport: verbs only if every rank has it.
  std::vector<int32_t> usable(nranks, 0);
  usable[rank] = ib != nullptr ? 1 : 0;
  BRAID_TRY(bootstrap->allGather(usable.data(), sizeof(int32_t))
                .withContext("exchanging which ranks can use verbs"));
  const auto without = std::find(usable.begin(), usable.end(), 0);
  if (without != usable.end()) {
    const int other = static_cast<int>(without - usable.begin());
    if (forceIb) {
      return invalidUsage("BRAID_NET=IB, but rank " + std::to_string(other) + " cannot use verbs" +
                          (other == rank ? ": " + why : std::string()));
    }
    ib.reset();
    if (!config.socketAllowed()) {
      return invalidUsage("ranks run on several hosts, rank " + std::to_string(other) +
                          " cannot use verbs" + (other == rank ? " (" + why + ")" : "") +
                          ", and BRAID_TRANSPORTS=" + config.transports + " excludes socket");
    }
    BRAID_INFO(
        "network: socket transport (%s)",
        other == rank ? why.c_str() : ("rank " + std::to_string(other) + " has no verbs").c_str());
    return Status::success();
  }
  BRAID_INFO("network: verbs transport on %s", ib->describe().c_str());
  return Status::success();
}

Status Comm::Impl::connectNetwork() {
  if (!config.socketAllowed() && !config.verbsAllowed()) {
    return invalidUsage("ranks run on several hosts but BRAID_TRANSPORTS=" + config.transports +
                        " excludes socket and ibverbs, the transports between hosts");
  }
  BRAID_ASSIGN_OR_RETURN(
      net, transport::net::SocketRendezvous::create(bootstrap->localAddress(),
                                                    bootstrap->proof(bootstrap::kProveSocketFifo)));
  netAddresses.assign(nranks, sockaddr_storage{});
  netAddresses[rank] = net->address();
  BRAID_TRY(bootstrap->allGather(netAddresses.data(), sizeof(sockaddr_storage))
                .withContext("exchanging the network transport's addresses"));
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
  BRAID_INFO("network: %d hosts; listening on %s", hosts,
             braid::net::addressToString(net->address()).c_str());
  return chooseNetTransport();
}

transport::net::SocketConnector Comm::Impl::socketConnector(
    const transport::net::Greeting& greeting) const {
  transport::net::SocketRendezvous* rendezvous = net.get();
  const int64_t timeoutMs = config.timeoutMs;
  std::shared_ptr<std::atomic<bool>> commStop = stop;
  return [rendezvous, greeting, timeoutMs, commStop](const std::atomic<bool>& stop) {
    return rendezvous->accept(greeting, Deadline::afterMs(timeoutMs).cancelledBy(commStop.get()),
                              &stop);
  };
}

Result<braid::net::Socket> Comm::Impl::connectSocket(int peer,
                                                     const transport::net::Greeting& greeting) {
  return net->connect(netAddresses[peer], greeting,
                      Deadline::afterMs(config.timeoutMs).cancelledBy(stop.get()));
}

transport::ib::IbRecvPump::SocketTaker Comm::Impl::socketTaker(
    const transport::net::Greeting& greeting) const {
  transport::net::SocketRendezvous* rendezvous = net.get();
  return [rendezvous, greeting] { return rendezvous->tryAccept(greeting); };
}

transport::net::StripeLayout Comm::Impl::stripeLayout() const {
  transport::net::StripeLayout layout;
  layout.threads = config.socketThreads;
  layout.socketsPerThread = config.socketsPerThread;
  return layout;
}

Result<std::vector<braid::net::Socket>> Comm::Impl::connectStripes(
    int peer, const transport::net::Greeting& greeting) {
  const int n = stripeLayout().sockets();
  std::vector<braid::net::Socket> sockets;
  for (int i = 0; i < n; ++i) {
    BRAID_ASSIGN_OR_RETURN(braid::net::Socket socket, connectSocket(peer, greeting.stripeOf(i, n)));
    sockets.push_back(std::move(socket));
  }
  return sockets;
}

transport::net::StripeConnector Comm::Impl::stripeConnector(
    const transport::net::Greeting& greeting) const {
  transport::net::SocketRendezvous* rendezvous = net.get();
  const int64_t timeoutMs = config.timeoutMs;
  const int n = stripeLayout().sockets();
  std::shared_ptr<std::atomic<bool>> commStop = stop;
  return [rendezvous, greeting, timeoutMs, n, commStop](
             int index, const std::atomic<bool>& stop) -> Result<braid::net::Socket> {
    // Filed by its stripe number only: a sender striped otherwise never arrives here, so the
    // receiver times out saying so.
    Result<braid::net::Socket> socket =
        rendezvous->accept(greeting.stripeOf(index, n),
                           Deadline::afterMs(timeoutMs).cancelledBy(commStop.get()), &stop);
    if (!socket.ok()) {
      return socket.status().withContext(
          "connection " + std::to_string(index) + " of " + std::to_string(n) +
          " (BRAID_SOCKET_NTHREADS x BRAID_NSOCKS_PERTHREAD must agree on all ranks)");
    }
    return socket;
  };
}

Result<std::unique_ptr<transport::RecvEnd>> Comm::Impl::awaitNetworkFifo(
    int peer, const transport::net::Greeting& greeting, size_t slotBytes) {
  if (ib) {
    return transport::ib::openIbRecvEnd(*ib, socketTaker(greeting), slotBytes, peer,
                                        config.timeoutMs);
  }
  if (stripeLayout().striped()) {
    return transport::net::openStripedSocketRecvEnd(stripeConnector(greeting), slotBytes, peer,
                                                    stripeLayout());
  }
  return transport::net::openSocketRecvEnd(socketConnector(greeting), slotBytes, peer);
}

Result<std::unique_ptr<transport::SendEnd>> Comm::Impl::connectNetworkFifo(
    int peer, const transport::net::Greeting& greeting, size_t slotBytes) {
  if (!ib && stripeLayout().striped()) {
    BRAID_ASSIGN_OR_RETURN(std::vector<braid::net::Socket> sockets, connectStripes(peer, greeting));
    return transport::net::openStripedSocketSendEnd(std::move(sockets), slotBytes, peer,
                                                    stripeLayout());
  }
  BRAID_ASSIGN_OR_RETURN(braid::net::Socket socket, connectSocket(peer, greeting));
  if (ib) {
    return transport::ib::openIbSendEnd(*ib, std::move(socket), slotBytes, peer, config.timeoutMs);
  }
  return transport::net::openSocketSendEnd(std::move(socket), slotBytes, peer);
}

Result<std::unique_ptr<transport::cuda_ipc::GpuRecvEnd>> Comm::Impl::awaitGpuNetworkFifo(
    int peer, const transport::net::Greeting& greeting, const std::string& name, size_t slot,
    kernels::engine::FifoCursor* cursor) {
  GpuState& g = *gpu;
  if (ib) {
    return transport::ib::openGpuIbRecvEnd(*g.runtime, name, slot, cursor, g.stream, *ib,
                                           socketTaker(greeting), peer, config.timeoutMs);
  }
  if (stripeLayout().striped()) {
    return transport::net::openGpuStripedSocketRecvEnd(
        *g.runtime, name, slot, cursor, g.stream, stripeConnector(greeting), peer, stripeLayout());
  }
  return transport::net::openGpuSocketRecvEnd(*g.runtime, name, slot, cursor, g.stream,
                                              socketConnector(greeting), peer);
}

Result<std::unique_ptr<transport::cuda_ipc::GpuSendEnd>> Comm::Impl::connectGpuNetworkFifo(
    int peer, const transport::net::Greeting& greeting, const std::string& name, size_t slot,
    kernels::engine::FifoCursor* cursor, kernels::engine::FifoCursor* proxyCursor) {
  GpuState& g = *gpu;
  if (!ib && stripeLayout().striped()) {
    BRAID_ASSIGN_OR_RETURN(std::vector<braid::net::Socket> sockets, connectStripes(peer, greeting));
    return transport::net::openGpuStripedSocketSendEnd(*g.runtime, name, slot, cursor, proxyCursor,
                                                       g.stream, std::move(sockets), peer,
                                                       stripeLayout());
  }
  BRAID_ASSIGN_OR_RETURN(braid::net::Socket socket, connectSocket(peer, greeting));
  if (ib) {
    return transport::ib::openGpuIbSendEnd(*g.runtime, name, slot, cursor, proxyCursor, g.stream,
                                           *ib, std::move(socket), peer, config.timeoutMs);
  }
  return transport::net::openGpuSocketSendEnd(*g.runtime, name, slot, cursor, proxyCursor, g.stream,
                                              std::move(socket), peer);
}

}  // namespace braid
