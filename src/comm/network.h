// Network: how a communicator whose ranks span hosts reaches the ranks on other hosts.
//
// It owns this rank's listener (transport/net/socket_rendezvous.h), every rank's listener
// address, and a network plugin where every rank loads one (transport/net/plugin), else the
// verbs transport where every rank has a port (transport/net/ib), else the socket transport
// carries the FIFOs. It makes the network FIFOs' ends, for host and GPU
// communicators; the receiving end never waits for its connection (its proxy does). All empty
// when every rank shares one host.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "algo/schedule.h"
#include "base/interfaces.h"
#include "base/socket.h"
#include "braid/status.h"
#include "comm/health.h"
#include "comm/members.h"
#include "comm/pxn_relays.h"
#include "config.h"
#include "gpu/runtime.h"
#include "transport/connection.h"
#include "transport/cuda_ipc/gpu_fifo.h"
#include "transport/link_failure.h"
#include "transport/net/ib/ib_fifo_pump.h"
#include "transport/net/ib/ib_network.h"
#include "transport/net/plugin/net_plugin_loader.h"
#include "transport/net/plugin/plugin_fifo.h"
#include "transport/net/socket/socket_fifo.h"
#include "transport/net/socket/socket_stripes.h"
#include "transport/net/socket_rendezvous.h"
#include "tune/select.h"

namespace braid::comm {

class Network {
 public:
  Network(const Config& config, const Members& members, Health& health)
      : config_(config), members_(members), health_(health) {}
  /// Stops the PXN relays first; says at INFO what the process's GPU FIFOs moved through a
  /// network plugin, by where the plugin found the bytes (network_plugin_gdr.cc).
  ~Network();

  /// Joins the network: the listener, the exchange of addresses, the choice of transport. Takes
  /// from `allowed` what does not cross hosts (LL, the one-shot).
  Status connect(tune::Allowed& allowed);
  /// Whether this communicator reaches some ranks through the network.
  bool active() const { return net_ != nullptr; }
  /// The network plugin that carries this communicator's network; null when none does.
  const transport::plugin::LoadedNetPlugin* plugin() const { return plugin_.get(); }
  /// A call starts that may move slots across hosts: the verbs or plugin proxy, which polls,
  /// stops pausing now (net::Doorbell). The socket proxies block where they progress and need
  /// nothing.
  void expectTraffic() const;
  /// The profiler's sink for proxy events (null: none asked), which the host socket FIFO ends
  /// made from now on report to (docs/profiling.md).
  void reportProxyEvents(std::shared_ptr<profile::ProxyEventSink> sink) {
    proxyEvents_ = std::move(sink);
  }
  /// Where a network plugin carries the traffic: what each rank's plugin device moves, shared
  /// among the ranks of its host on that device, at the slowest rank, in GB/s (the plugins'
  /// reported speeds); 0 where no plugin does or a plugin reports no speed. The same on every
  /// rank, as the cost model must be.
  double pluginNetworkGBs() const { return pluginNetworkGBs_; }
  /// The largest latency a rank's plugin device reports, in microseconds; 0 where none.
  double pluginLatencyUs() const { return pluginLatencyUs_; }
  /// Whether FIFOs of `protocol` to and from these (channel, peer) pairs may be made: only the
  /// Simple protocol crosses hosts.
  Status checkCrossesHosts(algo::Protocol protocol, const std::set<std::pair<int, int>>& recv,
                           const std::set<std::pair<int, int>>& send) const;

  /// A network FIFO's ends, over verbs or sockets: the receiving one never waits for its
  /// connection (its proxy does).
  Result<std::unique_ptr<transport::RecvEnd>> awaitFifo(int peer,
                                                        const transport::net::Greeting& greeting,
                                                        size_t slotBytes);
  Result<std::unique_ptr<transport::SendEnd>> connectFifo(int peer,
                                                          const transport::net::Greeting& greeting,
                                                          size_t slotBytes);
  /// The same for a GPU communicator: a GPU FIFO in pinned host memory named `name`, with the
  /// kernel's cursor and (sending) the one its receiving side needs; `stream` sets it up.
  Result<std::unique_ptr<transport::cuda_ipc::GpuRecvEnd>> awaitGpuFifo(
      gpu::Runtime& runtime, gpu::Stream stream, int peer, const transport::net::Greeting& greeting,
      const std::string& name, size_t slot, kernels::engine::FifoCursor* cursor);
  /// A GPU rank over verbs with PXN on: serves the other GPU ranks of its host whose
  /// point-to-point sends PXN routes through it (pxn_relays.h), on `device`; `reachesUs[r]`:
  /// whether rank r's GPU reaches this GPU's memory.
  Status serveRelays(gpu::Runtime& runtime, int device, std::vector<bool> reachesUs);
  Result<std::unique_ptr<transport::cuda_ipc::GpuSendEnd>> connectGpuFifo(
      gpu::Runtime& runtime, gpu::Stream stream, int peer, const transport::net::Greeting& greeting,
      const std::string& name, size_t slot, kernels::engine::FifoCursor* cursor,
      kernels::engine::FifoCursor* proxyCursor);

 private:
  /// Opens a network plugin if every rank loads one, else the verbs transport if every rank
  /// can; keeps sockets otherwise.
  Status chooseTransport();
  /// The plugin part of that (network_plugin.cc): loads NCCL_NET_PLUGIN's first usable plugin
  /// and keeps it where every rank did; leaves plugin_ null otherwise (an error where NCCL_NET
  /// names a plugin that some rank lacks).
  Status choosePlugin();
  /// A plugin FIFO end's link to `peer`.
  transport::plugin::PluginLink pluginLink(int peer, int channel = 0) const;
  /// The plugin device this rank's FIFOs use: the one nearest its GPU or CPU on the topology,
  /// where the plugin says where its devices are; else the rank's local rank modulo the count.
  /// `gpuPath` gets the path from this rank's GPU to it, where the topology places both.
  int choosePluginDevice(std::optional<topology::PathType>* gpuPath) const;
  /// `spec` with where a GPU FIFO end over the plugin keeps its slots: device memory the
  /// plugin's device reaches (GPUDirect RDMA, by dmabuf or NCCL_PTR_CUDA) or pinned host memory,
  /// as transport::ib::chooseGdr decides from this GPU, the device's ptrSupport and the path
  /// between them; and whether a receiving end flushes (the rules, or the device's forceFlush).
  /// Said once per direction at INFO (network_plugin_gdr.cc).
  transport::plugin::GpuFifoSpec pluginGpuSpec(transport::plugin::GpuFifoSpec spec, bool sending);
  /// The rank whose process relays the GPU FIFO that opens with `greeting` (a point-to-point
  /// send PXN routes through an NVLink peer, over verbs); -1 where it leaves directly.
  int relayOf(const transport::net::Greeting& greeting) const;
  /// That FIFO's sending end through relay `relay` (network_relay.cc): the kernel sends into
  /// a FIFO of the relay's process, whose proxy posts it on `nic`. Null (not an error) where
  /// the relay declined before reaching the receiver: the caller then sends directly.
  Result<std::unique_ptr<transport::cuda_ipc::GpuSendEnd>> connectRelayedGpuFifo(
      gpu::Runtime& runtime, int relay, const transport::net::Greeting& greeting,
      const std::string& name, size_t slot, kernels::engine::FifoCursor* cursor,
      const std::string& nic);
  /// The verbs port the topology planned for the FIFO end that opens with `greeting` (empty
  /// where it planned none), said at INFO with the port it resolves to.
  std::string plannedNic(const transport::net::Greeting& greeting, bool sending) const;
  /// Where a GPU FIFO end whose queue pairs start on port `port` (IbNetwork::portAt) keeps its
  /// slots: device memory the NIC reaches (GPUDirect RDMA) or pinned host memory, as
  /// transport::ib::chooseGdr decides from this GPU, that port and the topology's path between them
  /// (network_gdr.cc). Said once per port and direction at INFO.
  transport::ib::GdrChoice gpuSlotPlace(gpu::Runtime& runtime, int port, bool sending);
  /// Where BRAID_SOCKET_IFNAME selects several interfaces on some rank: every rank's, with the
  /// rendezvous' port, traded at creation (the rendezvous then listens on all of them).
  Status exchangeInterfaces();
  /// The addresses the socket connection of the FIFO that opens with `greeting` goes from and
  /// to: the interfaces planned for its channel's hop where both ends have them (`*from` null
  /// otherwise), said at INFO; else the peer's listener, by the way the system routes.
  sockaddr_storage socketRoute(const transport::net::Greeting& greeting, sockaddr_storage* from,
                               bool* bound) const;
  /// What a FIFO end whose connection breaks calls (Health::noteLinkFailure), and the flag that
  /// says the communicator stopped (Health::stop), after which a send end going away does not
  /// drain.
  /// `channel` names the end's channel to the profiler's proxy events.
  transport::LinkWatch linkWatch(int channel = 0) const;
  /// What waits for the connection that opens with `greeting` (on a proxy's thread), and the
  /// connection to `peer`'s listener that opens with it.
  transport::socket::SocketConnector socketConnector(
      const transport::net::Greeting& greeting) const;
  Result<braid::sockets::Socket> connectSocket(int peer, const transport::net::Greeting& greeting);
  /// The same as a verbs proxy takes it: at once, if it has arrived.
  transport::ib::IbRecvPump::SocketTaker socketTaker(
      const transport::net::Greeting& greeting) const;
  /// A striped socket FIFO's connections (config's BRAID_SOCKET_NTHREADS x NSOCKS_PERTHREAD).
  transport::socket::StripeLayout stripeLayout() const;
  Result<std::vector<braid::sockets::Socket>> connectStripes(
      int peer, const transport::net::Greeting& greeting);
  transport::socket::StripeConnector stripeConnector(
      const transport::net::Greeting& greeting) const;

  const Config& config_;
  const Members& members_;
  Health& health_;
  std::unique_ptr<transport::net::SocketRendezvous> net_;
  std::vector<sockaddr_storage> addresses_;
  std::vector<std::vector<braid::sockets::NamedAddress>> interfaces_;  ///< by rank; see above
  std::unique_ptr<transport::ib::IbNetwork> ib_;
  std::unique_ptr<PxnRelays> relays_;  ///< after net_ and ib_, which its relays use
  std::shared_ptr<profile::ProxyEventSink> proxyEvents_;
  std::shared_ptr<transport::plugin::LoadedNetPlugin> plugin_;  ///< shared with the process's
                                                                ///< other communicators
  int pluginDev_ = 0;                                           ///< choosePluginDevice's
  std::optional<topology::PathType> pluginGpuPath_;             ///< and the GPU's path to it
  double pluginNetworkGBs_ = 0;                                 ///< see pluginNetworkGBs()
  double pluginLatencyUs_ = 0;                                  ///< see pluginLatencyUs()
  std::mutex gdrMutex_;
  std::set<std::string> gdrSaid_;  ///< the ports and directions gpuSlotPlace has logged
  /// By port index: the path from this rank's GPU to it and whether it registers dmabufs.
  std::map<int, transport::ib::GdrFacts> gdrPorts_;
};

}  // namespace braid::comm
