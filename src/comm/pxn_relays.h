// PxnRelays: the PXN relays a GPU rank's process runs for the other GPU ranks of its host
// (transport/net/ib/ib_relay.h), over verbs.
//
// A rank whose point-to-point send to another host PXN routes through this rank (its GPU is
// the sender's NVLink peer, nearest the NIC of the receiver's rail: topology/net_routes.h) asks
// this rank's listener for a relay whenever it makes that FIFO, in any call, whatever this rank
// is doing then. So a thread of its own serves the requests, one at a time: each makes a FIFO
// in this process's pinned host memory, connects to the receiver and starts a send pump on this
// process's port of the receiver's rail (ib::IbRelay); the verbs proxy drives the pump from
// then on. The relays live until the communicator goes, each saying at INFO what it posted.
#pragma once

#include <atomic>
#include <memory>
#include <functional>
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

  /// Serves the relay requests `rendezvous` files, as rank `rank` on `device`.
  static Result<std::unique_ptr<PxnRelays>> start(gpu::Runtime& runtime, int device, int rank,
                                                  transport::net::SocketRendezvous& rendezvous,
                                                  transport::ib::IbNetwork& ib,
                                                  Connector connect, int64_t timeoutMs);
  /// Stops serving, then stops each relay (draining what its sender posted).
  ~PxnRelays();
  PxnRelays(const PxnRelays&) = delete;
  PxnRelays& operator=(const PxnRelays&) = delete;

 private:
  PxnRelays(gpu::Runtime& runtime, int device, int rank,
            transport::net::SocketRendezvous& rendezvous, transport::ib::IbNetwork& ib,
            Connector connect, int64_t timeoutMs)
      : runtime_(runtime),
        device_(device),
        rank_(rank),
        rendezvous_(rendezvous),
        ib_(ib),
        connect_(std::move(connect)),
        timeoutMs_(timeoutMs) {}
  void serve();
  /// One request: the relay made and the sender answered.
  void serveOne(const transport::net::Greeting& greeting, const braid::sockets::Socket& socket);

  struct Relayed {
    transport::net::Greeting greeting;  ///< the FIFO's
    std::unique_ptr<transport::ib::IbRelay> relay;
  };

  gpu::Runtime& runtime_;
  const int device_;
  const int rank_;
  transport::net::SocketRendezvous& rendezvous_;
  transport::ib::IbNetwork& ib_;
  const Connector connect_;
  const int64_t timeoutMs_;
  gpu::Stream stream_ = nullptr;  ///< the thread's, where it lays the FIFOs out
  std::vector<Relayed> relays_;   ///< the thread's, until it is joined
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace braid::comm
