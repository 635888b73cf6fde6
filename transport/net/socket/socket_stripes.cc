#include "transport/net/socket/socket_stripes.h"

#include <string>
#include <utility>

#include "base/log.h"
#include "transport/net/socket/socket_proxy.h"

namespace braid::transport::socket {
namespace {

namespace engine = kernels::engine;
using braid::sockets::IoResult;
using braid::sockets::Socket;
using engine::kFifoSlots;

}  // namespace

StripedPump::StripedPump(const engine::FifoRef& fifo, StripeLayout layout, SocketLink link)
    : fifo_(fifo), layout_(layout), link_(std::move(link)) {
  ends_.resize(static_cast<size_t>(layout.sockets()));
}

StripedPump::~StripedPump() { stop(); }

void StripedPump::startThreads(const std::function<void(int)>& body) {
  for (int t = 0; t < layout_.threads; ++t) threads_.emplace_back([body, t] { body(t); });
}

void StripedPump::stop() {
  {
    std::lock_guard<std::mutex> lock(socketsMutex_);
    stopping_.store(true);
    for (const Socket& s : sockets_) {
      if (s.valid()) s.shutdown();
    }
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

uint64_t StripedPump::slotOf(int thread, uint64_t k) const {
  const uint64_t perThread = static_cast<uint64_t>(layout_.socketsPerThread);
  const uint64_t round = k / perThread;
  const uint64_t within = k % perThread;
  return round * static_cast<uint64_t>(layout_.sockets()) +
         static_cast<uint64_t>(thread) * perThread + within;
}

bool StripedPump::pollUntil(bool drainEnds, const std::function<bool()>& ready) const {
  return net::pollWithPauses(ready,
                             [&] { return stopping_.load() || (drainEnds && draining_.load()); });
}

void StripedPump::lost(const char* what, int index, const IoResult& io, bool midSlot) const {
  if (stopping_.load()) return;
  link_.broke(what, ends_[static_cast<size_t>(index)], io, midSlot, draining_.load());
}

void StripedPump::lost(const std::string& what, int index) const {
  if (!stopping_.load()) link_.broke(what, ends_[static_cast<size_t>(index)], draining_.load());
}

void StripedPump::keep(int index, Socket socket) {
  ends_[static_cast<size_t>(index)] = braid::sockets::connectionEnds(socket);
  sockets_[static_cast<size_t>(index)] = std::move(socket);
}

// ---------------------------------------------------------------------------------------------

StripedSendPump::StripedSendPump(const engine::FifoRef& fifo, std::vector<Socket> sockets,
                                 StripeLayout layout, SocketLink link)
    : StripedPump(fifo, layout, std::move(link)) {
  sockets_.resize(sockets.size());
  for (size_t i = 0; i < sockets.size(); ++i) keep(static_cast<int>(i), std::move(sockets[i]));
  released_ = engine::receiverCursor(fifo.counters);
  base_ = released_.mine;
  releasedCount_.store(released_.mine);
  running_.store(layout.threads);
  startThreads([this](int t) { run(t); });
}

StripedSendPump::~StripedSendPump() {
  draining_.store(true);
  net::waitDrained(link_.drainDeadline(), [this] {
    return running_.load() == 0 ||
           releasedCount_.load() == engine::loadAcquire(&fifo_.counters->tail);
  });
  stop();
}

void StripedSendPump::run(int thread) {
  for (uint64_t k = 0; !stopping_.load(); ++k) {
    const uint64_t n = slotOf(thread, k);
    const uint32_t slot = base_ + static_cast<uint32_t>(n);
    const int index = static_cast<int>(n % static_cast<uint64_t>(layout_.sockets()));
    // Posted: the executor's tail is past it (counters wrap at 2^32; slots in flight are few).
    auto posted = [&] {
      return engine::loadAcquire(&fifo_.counters->tail) - base_ > static_cast<uint32_t>(n);
    };
    if (!pollUntil(/*drainEnds=*/true, posted)) break;
    const uint32_t word = engine::loadRelaxed(&fifo_.counters->bytes[slot % kFifoSlots]);
    const size_t bytes = word & ~engine::kLastSlice;
    const IoResult io =
        sendSlot(sockets_[static_cast<size_t>(index)], word, engine::slotAt(fifo_, slot), bytes);
    if (!io.ok()) {
      lost("sending to", index, io, /*midSlot=*/true);
      break;
    }
    sent(slot);
  }
  running_.fetch_sub(1);
}

void StripedSendPump::sent(uint32_t slot) {
  std::lock_guard<std::mutex> lock(orderMutex_);
  sent_.mark(slot);
  if (sent_.release(fifo_, released_)) releasedCount_.store(released_.mine);
}

// ---------------------------------------------------------------------------------------------

StripedRecvPump::StripedRecvPump(const engine::FifoRef& fifo, StripeConnector connect,
                                 StripeLayout layout, SocketLink link)
    : StripedPump(fifo, layout, std::move(link)), connect_(std::move(connect)) {
  sockets_.resize(static_cast<size_t>(layout.sockets()));
  posted_ = engine::senderCursor(fifo.counters);
  base_ = posted_.mine;
  startThreads([this](int t) { run(t); });
}

void StripedRecvPump::run(int thread) {
  // This thread's connections first, on this thread: nobody but the executor's receives waits
  // for them, with their own deadline.
  const int S = layout_.socketsPerThread;
  for (int j = 0; j < S; ++j) {
    const int index = thread * S + j;
    Result<Socket> connected = connect_(index, stopping_);
    if (!connected.ok()) {
      if (!stopping_.load())
        BRAID_WARN("socket transport: %s", connected.status().message().c_str());
      return;
    }
    std::lock_guard<std::mutex> lock(socketsMutex_);
    if (stopping_.load()) return;
    keep(index, std::move(connected).value());
  }
  for (uint64_t k = 0; !stopping_.load(); ++k) {
    const uint64_t n = slotOf(thread, k);
    const uint32_t slot = base_ + static_cast<uint32_t>(n);
    const int index = static_cast<int>(n % static_cast<uint64_t>(layout_.sockets()));
    const Socket& socket = sockets_[static_cast<size_t>(index)];
    uint64_t header = 0;
    IoResult io = braid::sockets::recvAll(socket, &header, sizeof(header), Deadline::never());
    if (!io.ok()) {
      lost("receiving from", index, io, /*midSlot=*/false);
      return;
    }
    const uint64_t bytes = header & ~static_cast<uint64_t>(engine::kLastSlice);
    if (header > UINT32_MAX || bytes > fifo_.slotBytes) {
      lost("sent a slot of " + std::to_string(bytes) + " bytes, over the " +
               std::to_string(fifo_.slotBytes) + " a slot holds",
           index);
      return;
    }
    // Room: the executor has released the slot this one reuses.
    auto room = [&] { return slot - engine::loadAcquire(&fifo_.counters->head) < kFifoSlots; };
    if (!pollUntil(/*drainEnds=*/false, room)) return;
    io = braid::sockets::recvBulk(socket, engine::slotAt(fifo_, slot), bytes, Deadline::never());
    if (!io.ok()) {
      lost("receiving from", index, io, /*midSlot=*/true);
      return;
    }
    landed(slot, static_cast<uint32_t>(header));
  }
}

void StripedRecvPump::landed(uint32_t slot, uint32_t word) {
  std::lock_guard<std::mutex> lock(orderMutex_);
  landed_.mark(slot, word);
  landed_.publish(fifo_, posted_);
}

}  // namespace braid::transport::socket
