// PxnRelays: the PXN relays a GPU rank's process runs for the other GPU ranks of its host
// (transport/net/ib/ib_relay.h), over verbs.
//
// A rank whose point-to-point send to another host PXN routes through this rank (its GPU is
// the sender's NVLink peer, nearest the NIC of the receiver's rail: topology/net_routes.h) asks
// this rank's listener for a relay whenever it makes that FIFO, in any call, whatever this rank
// is doing then. So a thread of its own serves the requests, one at a time: each makes a FIFO
// in this process's pinned host memory, connects to the receiver and starts a send pump on this
// process's port of the receiver's rail (ib::IbRelay); the verbs proxy drives the pump from
// then on. The FIFO's slots are in this GPU's memory where GPUDirect RDMA applies to this GPU
// and that port and the sender's GPU reaches this one's memory, else in pinned host memory. The
// relays live until the communicator goes, each saying at INFO what it posted.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/socket.h"
#include "braid/status.h"
#include "gpu/runtime.h"
#include "transport/net/ib/ib_network.h"
#include "transport/net/ib/ib_relay.h"
#include "transport/net/socket_rendezvous.h"

namespace braid::comm {

class PxnRelays {
 public:
  /// Connects to the receiver of the FIFO that opens with `greeting`, from this process.
  using Connector =
      std::function<Result<braid::sockets::Socket>(const transport::net::Greeting& greeting)>;

  /// Whether a sending end on port `port` may keep its slots in this GPU's memory
  /// (Network::gpuSlotPlace), asked on the relays' thread.
  using GdrFor = std::function<transport::ib::GdrChoice(int port)>;
  /// What the relays need beside the network: this rank, its GPU, and by rank whether that
  /// rank's GPU reaches this GPU's memory (GpuSide::placementFor).
  struct Host {
    gpu::Runtime* runtime = nullptr;
    int device = -1;
    int rank = -1;
    std::vector<bool> reachesUs;
  };

  /// Serves the relay requests `rendezvous` files.
  static Result<std::unique_ptr<PxnRelays>> start(Host host,
                                                  transport::net::SocketRendezvous& rendezvous,
                                                  transport::ib::IbNetwork& ib, Connector connect,
                                                  GdrFor gdrFor, int64_t timeoutMs);
  /// Stops serving, then stops each relay (draining what its sender posted).
  ~PxnRelays();
  PxnRelays(const PxnRelays&) = delete;
  PxnRelays& operator=(const PxnRelays&) = delete;

 private:
  PxnRelays(Host host, transport::net::SocketRendezvous& rendezvous, transport::ib::IbNetwork& ib,
            Connector connect, GdrFor gdrFor, int64_t timeoutMs)
      : host_(std::move(host)),
        rendezvous_(rendezvous),
        ib_(ib),
        connect_(std::move(connect)),
        gdrFor_(std::move(gdrFor)),
        timeoutMs_(timeoutMs) {}
  void serve();
  /// One request: the relay made and the sender answered.
  void serveOne(const transport::net::Greeting& greeting, const braid::sockets::Socket& socket);

  struct Relayed {
    transport::net::Greeting greeting;  ///< the FIFO's
    std::unique_ptr<transport::ib::IbRelay> relay;
  };

  const Host host_;
  transport::net::SocketRendezvous& rendezvous_;
  transport::ib::IbNetwork& ib_;
  const Connector connect_;
  const GdrFor gdrFor_;
  const int64_t timeoutMs_;
  gpu::Stream stream_ = nullptr;  ///< the thread's, where it lays the FIFOs out
  std::vector<Relayed> relays_;   ///< the thread's, until it is joined
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace braid::comm
