// Socket FIFOs striped over several TCP connections and proxy threads, for bandwidth
// (BRAID_SOCKET_NTHREADS threads x BRAID_NSOCKS_PERTHREAD connections each, as NCCL names them).
//
// One connection moves one slot at a time through one core's share of the kernel's TCP work; a
// fast link needs several in flight. Striping is by slot: slot k of the FIFO travels whole on
// connection k mod N (N = threads x connections per thread), and thread t serves connections
// t*S .. t*S+S-1, taking its slots in ascending order. A message of many slots is spread over
// all of them; a slot needs no reassembly. The receiving threads may land slots out of order, so
// both sides keep a slot's state and publish or release in order, as the verbs FIFOs do
// (transport/net/ib/ib_fifo_pump.h).
//
// Several threads wait on one FIFO here, so they poll its counters (pauses growing to 50 us)
// instead of sleeping on its futex, whose "I may be asleep" word is meant for one waiter. With
// the defaults (1 x 1) socket_fifo.h's blocking proxies run instead and none of this does.
//
// Each side works on a FIFO as the engine addresses it (FifoRef), so host communicators (a
// private FIFO) and GPU ones (a GPU FIFO in pinned host memory) stripe the same way.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/socket.h"
#include "base/socket_address.h"
#include "base/socket_io.h"
#include "braid/status.h"
#include "kernels/engine/fifo.h"
#include "transport/net/slots_in_order.h"
#include "transport/net/socket/socket_wire.h"

namespace braid::transport::socket {

struct StripeLayout {
  int threads = 1;           ///< BRAID_SOCKET_NTHREADS
  int socketsPerThread = 1;  ///< BRAID_NSOCKS_PERTHREAD
  int sockets() const { return threads * socketsPerThread; }
  bool striped() const { return sockets() > 1; }
};

/// Waits for connection number `index` of a striped FIFO; gives up once `stop` is set.
using StripeConnector =
    std::function<Result<braid::sockets::Socket>(int index, const std::atomic<bool>& stop)>;

/// What the threads of one side share.
class StripedPump {
 public:
  virtual ~StripedPump();

 protected:
  StripedPump(const kernels::engine::FifoRef& fifo, StripeLayout layout, SocketLink link);
  /// Starts thread t of the layout on `body(t)`.
  void startThreads(const std::function<void(int)>& body);
  /// Ends the threads: their waits see the flag, their sockets are shut down.
  void stop();
  /// The k-th slot thread t serves, counting from `base`: its slots in ascending order.
  uint64_t slotOf(int thread, uint64_t k) const;
  /// Polls until `ready()`, or false once stopping (or draining, when `drainEnds`).
  bool pollUntil(bool drainEnds, const std::function<bool()>& ready) const;
  /// Connection `index` ended under its thread (socket_wire.h's SocketLink::broke), unless
  /// stopping; a pump that drains is going away, and only logs it.
  void lost(const char* what, int index, const braid::sockets::IoResult& io, bool midSlot) const;
  void lost(const std::string& what, int index) const;
  /// Takes connection `index`, noting where it runs while it is up (under socketsMutex_).
  void keep(int index, braid::sockets::Socket socket);

  kernels::engine::FifoRef fifo_;
  StripeLayout layout_;
  SocketLink link_;
  uint32_t base_ = 0;  // the FIFO's counter when the pump started
  std::mutex socketsMutex_;
  std::vector<braid::sockets::Socket> sockets_;
  std::vector<braid::sockets::ConnectionEnds> ends_;  // sockets_'s, for their errors
  std::mutex orderMutex_;  // the in-order release or publication of out-of-order slots
  std::atomic<bool> stopping_{false};
  std::atomic<bool> draining_{false};
  std::vector<std::thread> threads_;
};

/// The sending side: takes the slots posted into `fifo` (as its receiver) onto `sockets`, which
/// must be the layout's N connections in order.
class StripedSendPump final : public StripedPump {
 public:
  StripedSendPump(const kernels::engine::FifoRef& fifo, std::vector<braid::sockets::Socket> sockets,
                  StripeLayout layout, SocketLink link);
  /// Sends what was posted first (bounded by net::kDrainMs), as socket_fifo.h's send ends do.
  ~StripedSendPump() override;

 private:
  void run(int thread);
  void sent(uint32_t slot);

  kernels::engine::FifoCursor released_{};
  std::atomic<uint32_t> releasedCount_{0};
  std::atomic<int> running_{0};
  net::SlotsInOrder sent_;  // under orderMutex_
};

/// The receiving side: slots off the connections `connect` waits for into `fifo` (as its
/// sender), published in order.
class StripedRecvPump final : public StripedPump {
 public:
  StripedRecvPump(const kernels::engine::FifoRef& fifo, StripeConnector connect,
                  StripeLayout layout, SocketLink link);
  ~StripedRecvPump() override { stop(); }

 private:
  void run(int thread);
  void landed(uint32_t slot, uint32_t word);

  StripeConnector connect_;
  kernels::engine::FifoCursor posted_{};
  net::SlotsInOrder landed_;  // under orderMutex_
};

}  // namespace braid::transport::socket
