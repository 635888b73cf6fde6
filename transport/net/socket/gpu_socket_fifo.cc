#include "transport/net/socket/gpu_socket_fifo.h"
#include "base/socket.h"
#include "base/socket_io.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>

#include "kernels/engine/fifo.h"
#include "transport/net/proxied_gpu_ends.h"
#include "transport/net/socket/socket_proxy.h"
#include "transport/net/socket/socket_stripes.h"

namespace braid::transport::socket {
namespace {

namespace engine = kernels::engine;
using braid::sockets::IoResult;
using braid::sockets::Socket;

/// Polls until `ready()` or the proxy is told to stop (or, when `drainEnds`, to drain): a few
/// yields, then pauses that grow to 50 us, short next to a slot's time on the wire.
template <typename Ready>
bool pollUntil(const ProxyThread& proxy, bool drainEnds, Ready ready) {
  return net::pollWithPauses(ready,
                             [&] { return proxy.stopping() || (drainEnds && proxy.draining()); });
}

// The GPU twins of socket_fifo.cc's SocketSendEnd and SocketRecvEnd, kept apart for a reason:
// those sleep on their FIFO's futex, which the executor wakes, and send bare byte counts; a
// kernel wakes nobody, so these poll its FIFO's counters, and their words carry the last-slice
// flag. What they do share is their thread, ProxyThread, and the framing, socket_wire.h.
class GpuSocketSendEnd final : public net::ProxiedGpuSendEnd {
 public:
  GpuSocketSendEnd(std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo, engine::FifoCursor* cursor,
                   Socket socket, SocketLink link)
      : net::ProxiedGpuSendEnd(std::move(fifo), cursor),
        events_(link.proxyEvents(/*isSend=*/true, fifo_->end().fifo.slotBytes)),
        proxy_(std::move(socket), std::move(link)) {
    const cuda_ipc::GpuEnd e = fifo_->end();
    ref_ = e.fifo;
    mine_ = engine::receiverCursor(ref_.counters);
    proxy_.start([this] { run(); });
  }
  ~GpuSocketSendEnd() override { proxy_.drainThenStop(); }

 private:
  // The kernel's posted slots, in order, onto the wire with their words; each released once sent.
  void run() {
    while (!proxy_.stopping()) {
      if (!pollUntil(proxy_, /*drainEnds=*/true,
                     [this] { return engine::recvData(ref_, mine_); })) {
        break;  // stopping, or draining with nothing left
      }
      const uint64_t word = engine::postedWord(ref_, mine_);
      const size_t bytes = word & ~static_cast<uint64_t>(engine::kLastSlice);
      if (events_.on()) events_.beginSlot(0, bytes);
      const IoResult io = sendSlot(proxy_.socket(), word, engine::slotAt(ref_, mine_.mine), bytes);
      if (!io.ok()) {
        proxy_.lost("sending to", io, /*midSlot=*/true);
        break;
      }
      if (events_.on()) events_.endSlot(0);
      engine::releaseSlot(ref_, mine_);
    }
    proxy_.finished();
  }

  engine::FifoRef ref_{};
  engine::FifoCursor mine_{};
  profile::ProxyEventTrack events_;  // the proxy's events, which outlive its thread
  ProxyThread proxy_;                // last: its thread uses the members above
};

class GpuSocketRecvEnd final : public net::ProxiedGpuRecvEnd {
 public:
  GpuSocketRecvEnd(std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo, SocketConnector connect,
                   SocketLink link)
      : net::ProxiedGpuRecvEnd(std::move(fifo)),
        connect_(std::move(connect)),
        events_(link.proxyEvents(/*isSend=*/false, fifo_->end().fifo.slotBytes)),
        proxy_(std::move(link)) {
    ref_ = fifo_->end().fifo;
    mine_ = engine::senderCursor(ref_.counters);
    proxy_.start([this] { run(); });
  }
  ~GpuSocketRecvEnd() override { proxy_.stop(); }

 private:
  // The connection, then slots off the wire into the FIFO as their sender would post them.
  void run() {
    if (!proxy_.connectWith(connect_)) return;
    while (!proxy_.stopping()) {
      uint64_t word = 0;
      if (!proxy_.receive(&word, sizeof(word), /*midSlot=*/false)) return;
      const uint64_t bytes = word & ~static_cast<uint64_t>(engine::kLastSlice);
      if (word > UINT32_MAX || bytes > ref_.slotBytes) {
        proxy_.lost("sent a GPU slot of " + std::to_string(bytes) + " bytes, over the " +
                    std::to_string(ref_.slotBytes) + " a slot holds");
        return;
      }
      if (!pollUntil(proxy_, /*drainEnds=*/false,
                     [this] { return engine::sendRoom(ref_, mine_); })) {
        return;
      }
      if (events_.on()) events_.beginSlot(0, bytes);
      if (!proxy_.receive(engine::slotAt(ref_, mine_.mine), bytes, /*midSlot=*/true)) return;
      engine::postSlot(ref_, mine_, static_cast<uint32_t>(word));
      if (events_.on()) events_.endSlot(0);
    }
  }

  SocketConnector connect_;
  engine::FifoRef ref_{};
  engine::FifoCursor mine_{};
  profile::ProxyEventTrack events_;  // the proxy's events, which outlive its thread
  ProxyThread proxy_;
};

using GpuStripedSendEnd = net::PumpedEnd<net::ProxiedGpuSendEnd, StripedSendPump>;
using GpuStripedRecvEnd = net::PumpedEnd<net::ProxiedGpuRecvEnd, StripedRecvPump>;

}  // namespace

Result<std::unique_ptr<cuda_ipc::GpuSendEnd>> openGpuStripedSocketSendEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes, engine::FifoCursor* cursor,
    engine::FifoCursor* proxyCursor, gpu::Stream stream, std::vector<Socket> connected, int peer,
    StripeLayout layout, LinkWatch watch) {
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo,
                         net::makePinnedFifo(runtime, name, slotBytes, proxyCursor, stream));
  auto end = std::make_unique<GpuStripedSendEnd>(std::move(fifo), cursor);
  end->makePump(std::move(connected), layout, SocketLink(peer, std::move(watch)));
  return std::unique_ptr<cuda_ipc::GpuSendEnd>(std::move(end));
}

Result<std::unique_ptr<cuda_ipc::GpuRecvEnd>> openGpuStripedSocketRecvEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes, engine::FifoCursor* cursor,
    gpu::Stream stream, StripeConnector connect, int peer, StripeLayout layout, LinkWatch watch) {
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo,
                         net::makePinnedFifo(runtime, name, slotBytes, cursor, stream));
  auto end = std::make_unique<GpuStripedRecvEnd>(std::move(fifo));
  end->makePump(std::move(connect), layout, SocketLink(peer, std::move(watch)));
  return std::unique_ptr<cuda_ipc::GpuRecvEnd>(std::move(end));
}

Result<std::unique_ptr<cuda_ipc::GpuSendEnd>> openGpuSocketSendEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes, engine::FifoCursor* cursor,
    engine::FifoCursor* proxyCursor, gpu::Stream stream, Socket connected, int peer,
    LinkWatch watch) {
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo,
                         net::makePinnedFifo(runtime, name, slotBytes, proxyCursor, stream));
  return std::unique_ptr<cuda_ipc::GpuSendEnd>(std::make_unique<GpuSocketSendEnd>(
      std::move(fifo), cursor, std::move(connected), SocketLink(peer, std::move(watch))));
}

Result<std::unique_ptr<cuda_ipc::GpuRecvEnd>> openGpuSocketRecvEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes, engine::FifoCursor* cursor,
    gpu::Stream stream, SocketConnector connect, int peer, LinkWatch watch) {
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo,
                         net::makePinnedFifo(runtime, name, slotBytes, cursor, stream));
  return std::unique_ptr<cuda_ipc::GpuRecvEnd>(std::make_unique<GpuSocketRecvEnd>(
      std::move(fifo), std::move(connect), SocketLink(peer, std::move(watch))));
}

}  // namespace braid::transport::socket
