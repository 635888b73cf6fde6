// Network (network.h): a communicator whose ranks span hosts, and what changes when some peers
// are on the network.
//
// Ranks on one host keep the shm FIFOs between them; a FIFO to or from a rank on another host is
// a network FIFO made the first time a schedule needs it. Every rank listens on the interface
// the bootstrap uses (BRAID_SOCKET_IFNAME; transport/net/socket_rendezvous.h) and a FIFO's two
// ends meet on a connection to the receiver's listener. Over that connection either the bytes
// flow (the socket transport, transport/net/socket/socket_fifo.h) or the two ends trade the
// addresses of their queue pairs and the bytes go by RDMA (the verbs transport, transport/net/ib_),
// which is chosen wherever every rank has an active verbs port, unless BRAID_NET=Socket. Before
// both comes a network plugin, where every rank loads the same one (network_plugin.cc): the two
// ends trade its connection handle over that connection and the plugin moves the bytes. A GPU
// communicator's FIFO to another host is a GPU FIFO in pinned host memory with a proxy at its
// other side (gpu_links.cc). Only the Simple protocol crosses hosts: LL's cells and the
// one-shot board are memory a peer reads directly, which another host cannot.
#include "comm/network.h"
#include "base/socket.h"
#include "base/socket_address.h"

#include <strings.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "transport/net/ib/gpu_ib_fifo.h"
#include "transport/net/ib/ib_fifo.h"
#include "transport/net/socket/fifo_connections.h"
#include "transport/net/socket/gpu_socket_fifo.h"
#include "transport/net/socket/socket_fifo.h"

namespace braid::comm {

Status Network::checkCrossesHosts(algo::Protocol protocol,
                                  const std::set<std::pair<int, int>>& recv,
                                  const std::set<std::pair<int, int>>& send) const {
  // Simple is the only other protocol.
  if (protocol == algo::Protocol::kSimple || !active()) return Status::success();
  for (const auto* pairs : {&recv, &send}) {
    for (const auto& [channel, peer] : *pairs) {
      if (members_.onOtherHost(peer)) {
        return invalidUsage("the LL protocol does not cross hosts yet (rank " +
                            std::to_string(peer) + " is on another host)");
      }
    }
  }
  return Status::success();
}

Status Network::chooseTransport() {
  BRAID_TRY(choosePlugin());
  if (plugin_) return Status::success();
  const bool forceSocket = strcasecmp(config_.net.c_str(), "Socket") == 0;
  const bool forceIb = strcasecmp(config_.net.c_str(), "IB") == 0;
  std::string why;
  if (forceSocket) {
    why = "BRAID_NET=" + config_.net;
  } else if (!config_.verbsAllowed()) {
    why = "BRAID_TRANSPORTS=" + config_.transports + " excludes ibverbs";
  } else {
    BRAID_ASSIGN_OR_RETURN(ib_,
                           transport::ib::IbNetwork::open(config_.ib, members_.localRank(), &why));
    if (ib_) {
      ib_->stopDrainsWhen(health_.stopFlag());
      ib_->onFailure(linkWatch().onFailure);
      ib_->reportProxyEvents(proxyEvents_);
    }
  }
  // Both ends of a FIFO must run the same transport: verbs only if every rank has it.
  std::vector<int32_t> usable(members_.nranks, 0);
  usable[members_.rank] = ib_ != nullptr ? 1 : 0;
  BRAID_TRY(members_.bootstrap()
                ->allGather(usable.data(), sizeof(int32_t))
                .withContext("exchanging which ranks can use verbs"));
  const auto without = std::find(usable.begin(), usable.end(), 0);
  if (without != usable.end()) {
    const int other = static_cast<int>(without - usable.begin());
    if (forceIb) {
      return invalidUsage("BRAID_NET=IB, but rank " + std::to_string(other) + " cannot use verbs" +
                          (other == members_.rank ? ": " + why : std::string()));
    }
    ib_.reset();
    if (!config_.socketAllowed()) {
      return invalidUsage("ranks run on several hosts, rank " + std::to_string(other) +
                          " cannot use verbs" + (other == members_.rank ? " (" + why + ")" : "") +
                          ", and BRAID_TRANSPORTS=" + config_.transports + " excludes socket");
    }
    const transport::socket::StripeLayout layout = stripeLayout();
    BRAID_INFO("network: socket transport (%s); %d connection(s) per FIFO end (%d thread(s) x %d)",
               other == members_.rank ? why.c_str()
                                      : ("rank " + std::to_string(other) + " has no verbs").c_str(),
               layout.sockets(), layout.threads, layout.socketsPerThread);
    return Status::success();
  }
  BRAID_INFO("network: verbs transport on %s", ib_->describe().c_str());
  return Status::success();
}

Status Network::connect(tune::Allowed& allowed) {
  if (!config_.socketAllowed() && !config_.verbsAllowed()) {
    return invalidUsage("ranks run on several hosts but BRAID_TRANSPORTS=" + config_.transports +
                        " excludes socket and ibverbs, the transports between hosts");
  }
  // Several interfaces: the listener takes connections on all of them (the wildcard address),
  // and peers reach it at the bootstrap's address unless a channel's plan names another.
  const sockaddr_storage bootstrapAddress = members_.bootstrap()->localAddress();
  const bool several =
      !config_.socketIfname.empty() &&
      braid::sockets::listInterfaces(config_.socketIfname, bootstrapAddress.ss_family).size() > 1;
  sockaddr_storage listenAt = bootstrapAddress;
  if (several) {
    listenAt = sockaddr_storage{};
    listenAt.ss_family = bootstrapAddress.ss_family;  // the wildcard: all zeros
  }
  BRAID_ASSIGN_OR_RETURN(net_,
                         transport::net::SocketRendezvous::create(
                             listenAt, members_.bootstrap()->proof(bootstrap::kProveSocketFifo)));
  addresses_.assign(members_.nranks, sockaddr_storage{});
  addresses_[members_.rank] = bootstrapAddress;
  braid::sockets::setPort(addresses_[members_.rank], braid::sockets::portOf(net_->address()));
  BRAID_TRY(members_.bootstrap()
                ->allGather(addresses_.data(), sizeof(sockaddr_storage))
                .withContext("exchanging the network transport's addresses"));
  BRAID_TRY(exchangeInterfaces().withContext("exchanging the socket transport's interfaces"));
  const std::vector<int> hostOf = members_.hostNumbers();
  const int hosts = *std::max_element(hostOf.begin(), hostOf.end()) + 1;
  if (!allowed.protocol[static_cast<int>(algo::Protocol::kSimple)]) {
    return invalidUsage("BRAID_PROTO excludes simple, the only protocol between hosts");
  }
  if (allowed.protocol[static_cast<int>(algo::Protocol::kLl)] && !config_.proto.empty()) {
    BRAID_WARN("BRAID_PROTO=%s: LL does not cross hosts yet; this communicator runs Simple",
               config_.proto.c_str());
  }
  allowed.protocol[static_cast<int>(algo::Protocol::kLl)] = false;
  allowed.algorithm[static_cast<int>(algo::Algorithm::kOneShot)] = false;
  BRAID_INFO("network: %d hosts; listening on %s", hosts,
             braid::sockets::addressToString(net_->address()).c_str());
  return chooseTransport();
}

transport::LinkWatch Network::linkWatch(int channel) const {
  // A FIFO end that fails ends every call at once, here and, through the watch, elsewhere.
  Health* health = &health_;
  transport::LinkWatch watch(
      [health](int peer, const std::string& why) { health->noteLinkFailure(peer, why); },
      health_.sharedStop());
  watch.proxyEvents = proxyEvents_;
  watch.channel = channel;
  return watch;
}

transport::socket::SocketConnector Network::socketConnector(
    const transport::net::Greeting& greeting) const {
  transport::net::SocketRendezvous* rendezvous = net_.get();
  const int64_t timeoutMs = config_.timeoutMs;
  std::shared_ptr<std::atomic<bool>> commStop = health_.sharedStop();
  return [rendezvous, greeting, timeoutMs, commStop](const std::atomic<bool>& stop) {
    Result<braid::sockets::Socket> socket = rendezvous->accept(
        greeting, Deadline::afterMs(timeoutMs).cancelledBy(commStop.get()), &stop);
    if (socket.ok()) transport::socket::countFifoConnection();
    return socket;
  };
}

namespace {

// One rank's interfaces as the bootstrap trades them: fixed size, names cut to IFNAMSIZ.
constexpr int kMaxInterfaces = 8;
struct InterfaceTable {
  int32_t count = 0;
  char names[kMaxInterfaces][16] = {};
  sockaddr_storage addresses[kMaxInterfaces] = {};
};

}  // namespace

Status Network::exchangeInterfaces() {
  InterfaceTable mine;
  if (!config_.socketIfname.empty()) {
    const uint16_t port = braid::sockets::portOf(net_->address());
    for (braid::sockets::NamedAddress& found : braid::sockets::listInterfaces(
             config_.socketIfname, addresses_[members_.rank].ss_family)) {
      if (mine.count == kMaxInterfaces) break;
      snprintf(mine.names[mine.count], sizeof(mine.names[0]), "%s", found.name.c_str());
      braid::sockets::setPort(found.address, port);
      mine.addresses[mine.count++] = found.address;
    }
  }
  std::vector<InterfaceTable> all(members_.nranks);
  all[members_.rank] = mine;
  BRAID_TRY(members_.bootstrap()->allGather(all.data(), sizeof(InterfaceTable)));
  const bool several =
      std::any_of(all.begin(), all.end(), [](const InterfaceTable& t) { return t.count > 1; });
  if (!several) return Status::success();
  interfaces_.assign(members_.nranks, {});
  for (int r = 0; r < members_.nranks; ++r) {
    const int count = std::clamp(all[r].count, 0, kMaxInterfaces);
    for (int i = 0; i < count; ++i) {
      all[r].names[i][sizeof(all[r].names[i]) - 1] = '\0';
      interfaces_[r].push_back(braid::sockets::NamedAddress{all[r].names[i], all[r].addresses[i]});
    }
  }
  std::string text;
  for (const auto& found : interfaces_[members_.rank]) {
    text += " " + found.name + " " + braid::sockets::addressToString(found.address);
  }
  BRAID_INFO("network: socket interfaces:%s", text.c_str());
  return Status::success();
}

sockaddr_storage Network::socketRoute(const transport::net::Greeting& greeting,
                                      sockaddr_storage* from, bool* bound) const {
  *bound = false;
  const int peer = greeting.receiver;
  if (interfaces_.empty()) return addresses_[peer];
  const std::string sendNic =
      members_.plannedNic(greeting.channel, greeting.sender, greeting.receiver, true);
  const std::string recvNic =
      members_.plannedNic(greeting.channel, greeting.sender, greeting.receiver, false);
  auto find = [](const std::vector<braid::sockets::NamedAddress>& list, const std::string& name) {
    return std::find_if(list.begin(), list.end(),
                        [&](const braid::sockets::NamedAddress& n) { return n.name == name; });
  };
  const auto local = find(interfaces_[members_.rank], sendNic);
  const auto remote = find(interfaces_[peer], recvNic);
  if (sendNic.empty() || local == interfaces_[members_.rank].end() ||
      remote == interfaces_[peer].end()) {
    return addresses_[peer];
  }
  *from = local->address;
  *bound = true;
  BRAID_INFO("channel %d: to rank %d via %s (planned) to its %s", greeting.channel, peer,
             sendNic.c_str(), recvNic.c_str());
  return remote->address;
}

Result<braid::sockets::Socket> Network::connectSocket(int peer,
                                                      const transport::net::Greeting& greeting) {
  sockaddr_storage from{};
  bool bound = false;
  const sockaddr_storage to =
      peer == greeting.receiver ? socketRoute(greeting, &from, &bound) : addresses_[peer];
  Result<braid::sockets::Socket> socket = net_->connect(
      to, greeting, Deadline::afterMs(config_.timeoutMs).cancelledBy(health_.stopFlag()),
      bound ? &from : nullptr);
  // The verbs FIFOs' hello goes over such a connection too; only the socket FIFOs' count.
  if (socket.ok() && !ib_) transport::socket::countFifoConnection();
  return socket;
}

transport::ib::IbRecvPump::SocketTaker Network::socketTaker(
    const transport::net::Greeting& greeting) const {
  transport::net::SocketRendezvous* rendezvous = net_.get();
  return [rendezvous, greeting] { return rendezvous->tryAccept(greeting); };
}

transport::socket::StripeLayout Network::stripeLayout() const {
  transport::socket::StripeLayout layout;
  layout.threads = config_.socketThreads;
  layout.socketsPerThread = config_.socketsPerThread;
  return layout;
}

Result<std::vector<braid::sockets::Socket>> Network::connectStripes(
    int peer, const transport::net::Greeting& greeting) {
  const int n = stripeLayout().sockets();
  std::vector<braid::sockets::Socket> sockets;
  for (int i = 0; i < n; ++i) {
    BRAID_ASSIGN_OR_RETURN(braid::sockets::Socket socket,
                           connectSocket(peer, greeting.stripeOf(i, n)));
    sockets.push_back(std::move(socket));
  }
  return sockets;
}

transport::socket::StripeConnector Network::stripeConnector(
    const transport::net::Greeting& greeting) const {
  transport::net::SocketRendezvous* rendezvous = net_.get();
  const int64_t timeoutMs = config_.timeoutMs;
  const int n = stripeLayout().sockets();
  std::shared_ptr<std::atomic<bool>> commStop = health_.sharedStop();
  return [rendezvous, greeting, timeoutMs, n, commStop](
             int index, const std::atomic<bool>& stop) -> Result<braid::sockets::Socket> {
    // Filed by its stripe number only: a sender striped otherwise never arrives here, so the
    // receiver times out saying so.
    Result<braid::sockets::Socket> socket =
        rendezvous->accept(greeting.stripeOf(index, n),
                           Deadline::afterMs(timeoutMs).cancelledBy(commStop.get()), &stop);
    if (!socket.ok()) {
      return socket.status().withContext(
          "connection " + std::to_string(index) + " of " + std::to_string(n) +
          " (BRAID_SOCKET_NTHREADS x BRAID_NSOCKS_PERTHREAD must agree on all ranks)");
    }
    transport::socket::countFifoConnection();
    return socket;
  };
}

std::string Network::plannedNic(const transport::net::Greeting& greeting, bool sending) const {
  const int peer = sending ? greeting.receiver : greeting.sender;
  std::string nic =
      members_.plannedNic(greeting.channel, greeting.sender, greeting.receiver, sending);
  // No ring or tree of the channel crosses there (send/recv, all-to-all): the NIC the topology
  // gives this rank's point-to-point traffic with that peer (members_routes.cc).
  std::string how = nic.empty() ? "" : "(planned)";
  if (nic.empty()) nic = members_.p2pNic(peer, sending, &how);
  std::string as;
  if (!nic.empty() && ib_->portAt(ib_->portFor(nic)).name() != nic) {
    // A NIC of a topology file that this process's devices name otherwise: the port of the
    // same rank among the host's RDMA NICs, where there is one.
    const int index = members_.rdmaNicIndex(nic);
    as = " as " + nic;
    nic = index >= 0 && index < ib_->portCount() ? ib_->portAt(index).name() : "";
  }
  BRAID_INFO("channel %d: %s rank %d via %s%s%s%s", greeting.channel, sending ? "to" : "from", peer,
             ib_->portAt(ib_->portFor(nic)).name().c_str(), nic.empty() ? "" : " ",
             nic.empty() ? "" : how.c_str(), nic.empty() ? "" : as.c_str());
  return nic;
}

Result<std::unique_ptr<transport::RecvEnd>> Network::awaitFifo(
    int peer, const transport::net::Greeting& greeting, size_t slotBytes) {
  if (plugin_) {
    return transport::plugin::openPluginRecvEnd(pluginLink(peer, greeting.channel),
                                                socketTaker(greeting), slotBytes);
  }
  if (ib_) {
    return transport::ib::openIbRecvEnd(*ib_, socketTaker(greeting), slotBytes, peer,
                                        config_.timeoutMs, plannedNic(greeting, /*sending=*/false));
  }
  if (stripeLayout().striped()) {
    return transport::socket::openStripedSocketRecvEnd(stripeConnector(greeting), slotBytes, peer,
                                                       stripeLayout(), linkWatch());
  }
  return transport::socket::openSocketRecvEnd(socketConnector(greeting), slotBytes, peer,
                                              linkWatch(greeting.channel));
}

Result<std::unique_ptr<transport::SendEnd>> Network::connectFifo(
    int peer, const transport::net::Greeting& greeting, size_t slotBytes) {
  if (!ib_ && !plugin_ && stripeLayout().striped()) {
    BRAID_ASSIGN_OR_RETURN(std::vector<braid::sockets::Socket> sockets,
                           connectStripes(peer, greeting));
    return transport::socket::openStripedSocketSendEnd(std::move(sockets), slotBytes, peer,
                                                       stripeLayout(), linkWatch());
  }
  BRAID_ASSIGN_OR_RETURN(braid::sockets::Socket socket, connectSocket(peer, greeting));
  if (plugin_) {
    return transport::plugin::openPluginSendEnd(pluginLink(peer, greeting.channel),
                                                std::move(socket), slotBytes);
  }
  if (ib_) {
    return transport::ib::openIbSendEnd(*ib_, std::move(socket), slotBytes, peer, config_.timeoutMs,
                                        plannedNic(greeting, /*sending=*/true));
  }
  return transport::socket::openSocketSendEnd(std::move(socket), slotBytes, peer,
                                              linkWatch(greeting.channel));
}

Result<std::unique_ptr<transport::cuda_ipc::GpuRecvEnd>> Network::awaitGpuFifo(
    gpu::Runtime& runtime, gpu::Stream stream, int peer, const transport::net::Greeting& greeting,
    const std::string& name, size_t slot, kernels::engine::FifoCursor* cursor) {
  if (plugin_) {
    return transport::plugin::openGpuPluginRecvEnd(
        pluginLink(peer, greeting.channel), socketTaker(greeting),
        pluginGpuSpec({&runtime, stream, name, slot, cursor}, /*sending=*/false));
  }
  if (ib_) {
    const std::string nic = plannedNic(greeting, /*sending=*/false);
    return transport::ib::openGpuIbRecvEnd(
        runtime, name, slot, cursor, stream, *ib_, socketTaker(greeting), peer, config_.timeoutMs,
        nic, gpuSlotPlace(runtime, ib_->portFor(nic), /*sending=*/false));
  }
  if (stripeLayout().striped()) {
    return transport::socket::openGpuStripedSocketRecvEnd(runtime, name, slot, cursor, stream,
                                                          stripeConnector(greeting), peer,
                                                          stripeLayout(), linkWatch());
  }
  return transport::socket::openGpuSocketRecvEnd(runtime, name, slot, cursor, stream,
                                                 socketConnector(greeting), peer,
                                                 linkWatch(greeting.channel));
}

Result<std::unique_ptr<transport::cuda_ipc::GpuSendEnd>> Network::connectGpuFifo(
    gpu::Runtime& runtime, gpu::Stream stream, int peer, const transport::net::Greeting& greeting,
    const std::string& name, size_t slot, kernels::engine::FifoCursor* cursor,
    kernels::engine::FifoCursor* proxyCursor) {
  if (!ib_ && !plugin_ && stripeLayout().striped()) {
    BRAID_ASSIGN_OR_RETURN(std::vector<braid::sockets::Socket> sockets,
                           connectStripes(peer, greeting));
    return transport::socket::openGpuStripedSocketSendEnd(runtime, name, slot, cursor, proxyCursor,
                                                          stream, std::move(sockets), peer,
                                                          stripeLayout(), linkWatch());
  }
  std::string nic;
  if (ib_) {
    nic = plannedNic(greeting, /*sending=*/true);
    if (const int relay = relayOf(greeting); relay >= 0) {
      BRAID_ASSIGN_OR_RETURN(
          std::unique_ptr<transport::cuda_ipc::GpuSendEnd> relayed,
          connectRelayedGpuFifo(runtime, relay, greeting, name, slot, cursor, nic));
      if (relayed) return relayed;
    }
  }
  BRAID_ASSIGN_OR_RETURN(braid::sockets::Socket socket, connectSocket(peer, greeting));
  if (plugin_) {
    return transport::plugin::openGpuPluginSendEnd(
        pluginLink(peer, greeting.channel), std::move(socket),
        pluginGpuSpec({&runtime, stream, name, slot, cursor}, /*sending=*/true), proxyCursor);
  }
  if (ib_) {
    return transport::ib::openGpuIbSendEnd(
        runtime, name, slot, cursor, proxyCursor, stream, *ib_, std::move(socket), peer,
        config_.timeoutMs, nic, gpuSlotPlace(runtime, ib_->portFor(nic), /*sending=*/true));
  }
  return transport::socket::openGpuSocketSendEnd(runtime, name, slot, cursor, proxyCursor, stream,
                                                 std::move(socket), peer,
                                                 linkWatch(greeting.channel));
}

void Network::expectTraffic() const {
  if (ib_) ib_->proxy().expectWork();
  if (plugin_) plugin_->expectWork();
}

}  // namespace braid::comm
