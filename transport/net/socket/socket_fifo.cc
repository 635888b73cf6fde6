#include "transport/net/socket/socket_fifo.h"
#include "base/socket_io.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "base/futex.h"
#include "base/log.h"
#include "transport/net/proxied_ends.h"
#include "transport/net/socket/socket_proxy.h"
#include "transport/shm/shm_fifo.h"

namespace braid::transport::socket {
namespace {

using braid::sockets::IoResult;
using braid::sockets::Socket;

using LocalFifo = shm::PrivateFifo;

Result<LocalFifo> makeLocalFifo(size_t slotBytes) { return shm::createPrivateFifo(slotBytes); }

class SocketSendEnd final : public net::ProxiedSendEnd {
 public:
  SocketSendEnd(LocalFifo fifo, Socket socket, SocketLink link)
      : net::ProxiedSendEnd(std::move(fifo)),
        events_(link.proxyEvents(/*isSend=*/true, fifo_.send->slotBytes())),
        proxy_(std::move(socket), std::move(link)) {
    proxy_.start([this] { run(); });
  }
  ~SocketSendEnd() override { proxy_.drainThenStop(); }

  void post(size_t bytes) override {
    lent_[posted_++ % kFifoSlots].store(nullptr, std::memory_order_release);
    fifo_.send->post(bytes);
  }

  // Lending (connection.h): the proxy sends a lent slot's bytes from the caller's memory, which
  // the kernel copies into the socket as it would the slot's; the slot itself stays unused.
  // lent_[k % kFifoSlots] is what the k-th posted slot lends (null: its bytes are in the slot),
  // written before the post publishes the slot and read by the proxy after it takes it. (The
  // FIFO's counters order these already; atomics say so to ThreadSanitizer too, which cannot
  // follow the FIFO's two mappings of one segment.)
  bool lends() const override { return true; }
  uint32_t postLent(const void* data, size_t bytes) override {
    lent_[posted_++ % kFifoSlots].store(data, std::memory_order_release);
    fifo_.send->post(bytes);
    return lendsPosted_++;
  }
  Status waitReturned(uint32_t upTo, const WaitContext& ctx) override {
    return futex::waitUntil(&returned_, &returnWaiting_, ctx, [upTo](uint32_t returned) {
      return static_cast<int32_t>(returned - upTo) > 0;
    });
  }
  void abandonLent() override {
    if (__atomic_load_n(&returned_, __ATOMIC_ACQUIRE) != lendsPosted_) proxy_.stop();
  }

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
      const void* lent = lent_[taken_++ % kFifoSlots].load(std::memory_order_acquire);
      if (events_.on()) events_.beginSlot(0, bytes);
      const IoResult io = sendSlot(proxy_.socket(), bytes, lent != nullptr ? lent : slot, bytes);
      if (!io.ok()) {
        proxy_.lost("sending to", io, /*midSlot=*/true);
        break;
      }
      if (events_.on()) events_.endSlot(0);
      if (lent != nullptr) {
        // The kernel has the bytes: the caller may have its memory back.
        __atomic_fetch_add(&returned_, 1u, __ATOMIC_SEQ_CST);
        futex::wakeIfWaiting(&returned_, &returnWaiting_);
      }
      fifo_.recv->release();
    }
    proxy_.finished();
  }

  std::atomic<const void*> lent_[kFifoSlots] = {};
  uint32_t posted_ = 0;       // slots posted (the executor's)
  uint32_t taken_ = 0;        // slots taken (the proxy's)
  uint32_t lendsPosted_ = 0;  // the executor's count of lends
  uint32_t returned_ = 0;     // lends given back: written by the proxy, a futex word
  uint32_t returnWaiting_ = 0;
  profile::ProxyEventTrack events_;  // the proxy's events, which outlive its thread
  ProxyThread proxy_;                // its thread uses fifo_ and stops before fifo_ goes
};

class SocketRecvEnd final : public net::ProxiedRecvEnd {
 public:
  SocketRecvEnd(LocalFifo fifo, SocketConnector connect, SocketLink link)
      : net::ProxiedRecvEnd(std::move(fifo)),
        connect_(std::move(connect)),
        events_(link.proxyEvents(/*isSend=*/false, fifo_.send->slotBytes())),
        proxy_(std::move(link)) {
    proxy_.start([this] { run(); });
  }
  ~SocketRecvEnd() override { proxy_.stop(); }

  Result<const void*> waitSlot(const WaitContext& ctx, size_t* bytes) override {
    Result<const void*> slot = fifo_.recv->waitSlot(ctx, bytes);
    if (!slot.ok()) return slot;
    return landedOr(slot.value());
  }
  const void* trySlot(size_t* bytes) override {
    const void* slot = fifo_.recv->trySlot(bytes);
    return slot == nullptr ? nullptr : landedOr(slot);
  }
  void release() override {
    ++taken_;
    fifo_.recv->release();
  }

  // Offers (connection.h). The proxy counts the messages it reads (received_), the executor
  // those it took (taken_); an offer covers messages taken_ .. taken_ + n - 1 as made.
  // landed_[k % kFifoSlots] is where message k landed (null: in its slot), written by the proxy
  // before it posts the message and read by the executor after it sees it posted (atomics for
  // the reason lent_ is one).
  bool takesOffers() const override { return true; }
  void offer(void* into, size_t sliceBytes, size_t bytes) override {
    std::lock_guard<std::mutex> lock(offerMutex_);
    offer_ = {static_cast<char*>(into), sliceBytes, bytes, taken_,
              static_cast<uint32_t>((bytes + sliceBytes - 1) / sliceBytes)};
  }
  void withdrawOffer() override {
    bool pending = false;
    {
      std::lock_guard<std::mutex> lock(offerMutex_);
      pending = offer_.into != nullptr &&
                static_cast<int32_t>(taken_ - offer_.first) < static_cast<int32_t>(offer_.count);
      offer_ = {};
    }
    // Messages offered and not taken: the proxy may be reading one into the caller's memory.
    if (pending) proxy_.stop();
  }

 private:
  struct Offer {
    char* into = nullptr;
    size_t sliceBytes = 0;
    size_t bytes = 0;
    uint32_t first = 0;  // the message number of its first slice
    uint32_t count = 0;  // its slices
  };

  const void* landedOr(const void* slot) const {
    const void* landed = landed_[taken_ % kFifoSlots].load(std::memory_order_acquire);
    return landed != nullptr ? landed : slot;
  }

  // Where message received_ of `bytes` goes: its place in the offer that covers it, where its
  // size is the one the offer expects there, else its slot (the executor's checks then say
  // what is wrong with it).
  char* placeFor(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(offerMutex_);
    const Offer& o = offer_;
    const uint32_t k = received_ - o.first;
    if (o.into == nullptr || k >= o.count) return nullptr;
    const size_t at = k * o.sliceBytes;
    const size_t expected = std::min(o.sliceBytes, o.bytes - at);
    return bytes == expected ? o.into + at : nullptr;
  }

  // The connection first (on this thread, so that nobody waits for it but the executor's
  // receives, with their own deadline), then slots off the wire into free slots of the local
  // FIFO, in order, or where an offer asks.
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
      char* place = placeFor(header);
      if (events_.on()) events_.beginSlot(0, header);
      if (!proxy_.receive(place != nullptr ? place : slot.value(), header, /*midSlot=*/true)) {
        return;
      }
      landed_[received_++ % kFifoSlots].store(place, std::memory_order_release);
      fifo_.send->post(header);
      if (events_.on()) events_.endSlot(0);
    }
  }

  SocketConnector connect_;
  std::mutex offerMutex_;
  Offer offer_;            // guarded by offerMutex_
  uint32_t received_ = 0;  // messages read (the proxy's)
  uint32_t taken_ = 0;     // messages released (the executor's)
  std::atomic<const void*> landed_[kFifoSlots] = {};
  profile::ProxyEventTrack events_;  // the proxy's events, which outlive its thread
  ProxyThread proxy_;
};

using StripedSocketSendEnd = net::PumpedEnd<net::ProxiedSendEnd, StripedSendPump>;
using StripedSocketRecvEnd = net::PumpedEnd<net::ProxiedRecvEnd, StripedRecvPump>;

}  // namespace

Result<std::unique_ptr<SendEnd>> openStripedSocketSendEnd(std::vector<Socket> connected,
                                                          size_t slotBytes, int peer,
                                                          StripeLayout layout, LinkWatch watch) {
  BRAID_ASSIGN_OR_RETURN(LocalFifo fifo, makeLocalFifo(slotBytes));
  auto end = std::make_unique<StripedSocketSendEnd>(std::move(fifo));
  end->makePump(std::move(connected), layout, SocketLink(peer, std::move(watch)));
  return std::unique_ptr<SendEnd>(std::move(end));
}

Result<std::unique_ptr<RecvEnd>> openStripedSocketRecvEnd(StripeConnector connect, size_t slotBytes,
                                                          int peer, StripeLayout layout,
                                                          LinkWatch watch) {
  BRAID_ASSIGN_OR_RETURN(LocalFifo fifo, makeLocalFifo(slotBytes));
  auto end = std::make_unique<StripedSocketRecvEnd>(std::move(fifo));
  end->makePump(std::move(connect), layout, SocketLink(peer, std::move(watch)));
  return std::unique_ptr<RecvEnd>(std::move(end));
}

Result<std::unique_ptr<SendEnd>> openSocketSendEnd(Socket connected, size_t slotBytes, int peer,
                                                   LinkWatch watch) {
  BRAID_ASSIGN_OR_RETURN(LocalFifo fifo, makeLocalFifo(slotBytes));
  return std::unique_ptr<SendEnd>(std::make_unique<SocketSendEnd>(
      std::move(fifo), std::move(connected), SocketLink(peer, std::move(watch))));
}

Result<std::unique_ptr<RecvEnd>> openSocketRecvEnd(SocketConnector connect, size_t slotBytes,
                                                   int peer, LinkWatch watch) {
  BRAID_ASSIGN_OR_RETURN(LocalFifo fifo, makeLocalFifo(slotBytes));
  return std::unique_ptr<RecvEnd>(std::make_unique<SocketRecvEnd>(
      std::move(fifo), std::move(connect), SocketLink(peer, std::move(watch))));
}

Result<std::unique_ptr<RecvEnd>> openSocketRecvEnd(Socket connected, size_t slotBytes, int peer,
                                                   LinkWatch watch) {
  auto holder = std::make_shared<Socket>(std::move(connected));
  return openSocketRecvEnd(
      [holder](const std::atomic<bool>&) -> Result<Socket> { return std::move(*holder); },
      slotBytes, peer, std::move(watch));
}

}  // namespace braid::transport::socket
