#include "transport/net/socket_fifo.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "base/log.h"
#include "transport/net/proxied_ends.h"
#include "transport/net/proxy_thread.h"
#include "transport/shm/shm_fifo.h"

namespace braid::transport::net {
namespace {

using braid::net::IoResult;
using braid::net::Socket;

using LocalFifo = shm::PrivateFifo;

Result<LocalFifo> makeLocalFifo(size_t slotBytes) { return shm::createPrivateFifo(slotBytes); }

class SocketSendEnd final : public ProxiedSendEnd {
 public:
  SocketSendEnd(LocalFifo fifo, Socket socket, SocketLink link)
      : ProxiedSendEnd(std::move(fifo)), proxy_(std::move(socket), std::move(link)) {
    proxy_.start([this] { run(); });
  }
  ~SocketSendEnd() override { proxy_.drainThenStop(); }

 private:
  // Slots the executor posted, in order, onto the wire; each handed back once sent. Once the
  // end is going away (draining), what is posted still goes, and then the thread ends.
  void run() {
    while (!proxy_.stopping()) {
      size_t bytes = 0;
      const void* slot = fifo_.recv->trySlot(&bytes);
      if (slot == nullptr) {
        if (proxy_.draining()) break;
        Result<const void*> waited = fifo_.recv->waitSlot(proxy_.waitContext(), &bytes);
        if (!waited.ok()) continue;  // nothing posted yet, draining or stopping
        slot = waited.value();
      }
      const IoResult io = sendSlot(proxy_.socket(), bytes, slot, bytes);
      if (!io.ok()) {
        proxy_.lost("sending to", io, /*midSlot=*/true);
        break;
      }
      fifo_.recv->release();
    }
    proxy_.finished();
  }

  ProxyThread proxy_;  // its thread uses fifo_ and stops before fifo_ goes
};

class SocketRecvEnd final : public ProxiedRecvEnd {
 public:
  SocketRecvEnd(LocalFifo fifo, SocketConnector connect, SocketLink link)
      : ProxiedRecvEnd(std::move(fifo)), connect_(std::move(connect)), proxy_(std::move(link)) {
    proxy_.start([this] { run(); });
  }
  ~SocketRecvEnd() override { proxy_.stop(); }

 private:
  // The connection first (on this thread, so that nobody waits for it but the executor's
  // receives, with their own deadline), then slots off the wire into free slots of the local
  // FIFO, in order.
  void run() {
    if (!proxy_.connectWith(connect_)) return;
    while (!proxy_.stopping()) {
      uint64_t header = 0;
      if (!proxy_.receive(&header, sizeof(header), /*midSlot=*/false)) return;
      if (header > fifo_.send->slotBytes()) {
        proxy_.lost("sent a slot of " + std::to_string(header) + " bytes, over the " +
                    std::to_string(fifo_.send->slotBytes()) + " a slot holds");
        return;
      }
      Result<void*> slot = fifo_.send->waitSlot(proxy_.waitContext());
      while (!slot.ok() && !proxy_.stopping()) slot = fifo_.send->waitSlot(proxy_.waitContext());
      if (!slot.ok()) return;
      if (!proxy_.receive(slot.value(), header, /*midSlot=*/true)) return;
      fifo_.send->post(header);
    }
  }

  SocketConnector connect_;
  ProxyThread proxy_;
};

using StripedSocketSendEnd = PumpedEnd<ProxiedSendEnd, StripedSendPump>;
using StripedSocketRecvEnd = PumpedEnd<ProxiedRecvEnd, StripedRecvPump>;

}  // namespace

Result<std::unique_ptr<SendEnd>> openStripedSocketSendEnd(std::vector<Socket> connected,
                                                          size_t slotBytes, int peer,
                                                          StripeLayout layout,
                                                          LinkFailureHandler onFailure) {
  BRAID_ASSIGN_OR_RETURN(LocalFifo fifo, makeLocalFifo(slotBytes));
  auto end = std::make_unique<StripedSocketSendEnd>(std::move(fifo));
  end->makePump(std::move(connected), layout, SocketLink(peer, std::move(onFailure)));
  return std::unique_ptr<SendEnd>(std::move(end));
}

Result<std::unique_ptr<RecvEnd>> openStripedSocketRecvEnd(StripeConnector connect, size_t slotBytes,
                                                          int peer, StripeLayout layout,
                                                          LinkFailureHandler onFailure) {
  BRAID_ASSIGN_OR_RETURN(LocalFifo fifo, makeLocalFifo(slotBytes));
  auto end = std::make_unique<StripedSocketRecvEnd>(std::move(fifo));
  end->makePump(std::move(connect), layout, SocketLink(peer, std::move(onFailure)));
  return std::unique_ptr<RecvEnd>(std::move(end));
}

Result<std::unique_ptr<SendEnd>> openSocketSendEnd(Socket connected, size_t slotBytes, int peer,
                                                   LinkFailureHandler onFailure) {
  BRAID_ASSIGN_OR_RETURN(LocalFifo fifo, makeLocalFifo(slotBytes));
  return std::unique_ptr<SendEnd>(std::make_unique<SocketSendEnd>(
      std::move(fifo), std::move(connected), SocketLink(peer, std::move(onFailure))));
}

Result<std::unique_ptr<RecvEnd>> openSocketRecvEnd(SocketConnector connect, size_t slotBytes,
                                                   int peer, LinkFailureHandler onFailure) {
  BRAID_ASSIGN_OR_RETURN(LocalFifo fifo, makeLocalFifo(slotBytes));
  return std::unique_ptr<RecvEnd>(std::make_unique<SocketRecvEnd>(
      std::move(fifo), std::move(connect), SocketLink(peer, std::move(onFailure))));
}

Result<std::unique_ptr<RecvEnd>> openSocketRecvEnd(Socket connected, size_t slotBytes, int peer,
                                                   LinkFailureHandler onFailure) {
  auto holder = std::make_shared<Socket>(std::move(connected));
  return openSocketRecvEnd(
      [holder](const std::atomic<bool>&) -> Result<Socket> { return std::move(*holder); },
      slotBytes, peer, std::move(onFailure));
}

}  // namespace braid::transport::net
