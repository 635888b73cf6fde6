// ProxyThread: the socket transport's proxy (the verbs transport's is ib/ib_proxy.h), the thread
// behind one end of a FIFO that crosses the network, and what it shares with the end that owns it:
// its connection, its stop and drain flags, and how it waits on its FIFO. The socket FIFOs of host
// communicators (socket_fifo.cc) and of GPU communicators (gpu_socket_fifo.cc) run their pumps on
// it.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "base/deadline.h"
#include "base/log.h"
#include "base/socket.h"
#include "base/socket_address.h"
#include "base/socket_io.h"
#include "braid/status.h"
#include "transport/connection.h"
#include "transport/net/proxy_waits.h"
#include "transport/net/socket/socket_wire.h"

namespace braid::transport::socket {

// How long a proxy's wait on its local FIFO lasts before it looks at its stop flag again. The
// wait ends at once when the executor posts or releases a slot; this only bounds how long the
// destructor waits for an idle proxy.
inline constexpr int64_t kStopCheckMs = 50;

/// What a proxy thread shares with the end that owns it.
class ProxyThread {
 public:
  /// `link` names the peer and whom a broken connection is told to (socket_wire.h).
  ProxyThread(braid::sockets::Socket socket, SocketLink link)
      : socket_(std::move(socket)),
        ends_(braid::sockets::connectionEnds(socket_)),
        link_(std::move(link)) {}
  explicit ProxyThread(SocketLink link) : link_(std::move(link)) {}
  ~ProxyThread() { stop(); }

  template <typename Body>
  void start(Body body) {
    thread_ = std::thread(std::move(body));
  }
  /// Ends the thread: its FIFO wait sees the flag, its socket call returns.
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(socketMutex_);
      stopping_.store(true);
      interrupt_.store(true);
      if (socket_.valid()) socket_.shutdown();
    }
    thread_.join();
  }
  /// The proxy thread hands over the connection it waited for; false when stopping already.
  bool adopt(braid::sockets::Socket socket) {
    std::lock_guard<std::mutex> lock(socketMutex_);
    if (stopping_.load()) return false;
    socket_ = std::move(socket);
    ends_ = braid::sockets::connectionEnds(socket_);
    return true;
  }
  const std::atomic<bool>& stopFlag() const { return stopping_; }
  /// Asks the thread to finish what it has and end (see draining()); stops it if it has not
  /// within net::kDrainMs, or at once once the communicator stopped (SocketLink::drainDeadline).
  void drainThenStop() {
    if (!thread_.joinable()) return;
    draining_.store(true);
    interrupt_.store(true);
    net::waitDrained(link_.drainDeadline(), [this] { return finished_.load(); });
    stop();
  }
  /// The thread calls this as it returns.
  void finished() { finished_.store(true); }
  bool stopping() const { return stopping_.load(); }
  bool draining() const { return draining_.load(); }
  const braid::sockets::Socket& socket() const { return socket_; }
  /// A wait on the local FIFO that gives up after kStopCheckMs or when stopping.
  WaitContext waitContext() const {
    WaitContext ctx;
    ctx.deadline = Deadline::afterMs(kStopCheckMs);
    ctx.abort = &interrupt_;
    ctx.peer = link_.peer();
    // No polling: it only takes the core the executors need (measured: 20 us of polling changed
    // nothing at 8 B on 2 cores, 100 us made it 1.6x slower).
    ctx.spinNs = 0;
    return ctx;
  }
  /// The connection ended under the thread while `what` ("sending to", "receiving from"),
  /// `midSlot` or between slots: logged and told to the communicator (SocketLink::broke), unless
  /// it was ours to end. An end that drains is going away: its break is only logged.
  void lost(const char* what, const braid::sockets::IoResult& io, bool midSlot) const {
    if (!stopping()) link_.broke(what, ends_, io, midSlot, /*goingAway=*/draining());
  }
  /// The peer broke the protocol (`what` says how): logged and told.
  void lost(const std::string& what) const {
    if (!stopping()) link_.broke(what, ends_, /*goingAway=*/draining());
  }
  /// A connection that never came (its wait timed out or was cancelled): logged, as the
  /// executor's own wait for the slots ends with its own error.
  void lost(const Status& status) const {
    if (!stopping()) BRAID_WARN("socket transport: %s", status.message().c_str());
  }
  /// On the thread: waits for the connection with `connect` and adopts it; false (having said
  /// why, unless stopping) when there is none to pump.
  template <typename Connector>
  bool connectWith(const Connector& connect) {
    Result<braid::sockets::Socket> connected = connect(stopFlag());
    if (!connected.ok()) {
      lost(connected.status());
      return false;
    }
    return adopt(std::move(connected).value());
  }
  /// On the thread: reads exactly `bytes`, a slot's word or (`midSlot`) its bytes, the latter
  /// in bulk (waking as they arrive by the 256 KiB); false (having said why, unless stopping)
  /// when the connection ended.
  bool receive(void* data, size_t bytes, bool midSlot) {
    braid::sockets::IoResult io =
        midSlot ? braid::sockets::recvBulk(socket_, data, bytes, Deadline::never())
                : braid::sockets::recvAll(socket_, data, bytes, Deadline::never());
    if (!io.ok()) lost("receiving from", io, midSlot);
    return io.ok();
  }

 private:
  std::mutex socketMutex_;  // socket_ is adopted by the thread while stop() may shut it down
  braid::sockets::Socket socket_;
  braid::sockets::ConnectionEnds ends_;  // taken while the connection is up, for its errors
  SocketLink link_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> draining_{false};
  std::atomic<bool> finished_{false};
  std::atomic<bool> interrupt_{false};  // ends a wait on the FIFO: set by both of the above
  std::thread thread_;
};

}  // namespace braid::transport::socket
