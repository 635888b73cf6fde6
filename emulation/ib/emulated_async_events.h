// The emulated HCA's asynchronous events: what ibv_get_async_event reads from a context, and the
// port states that raise them.
//
// A real context's async_fd is a file descriptor of the uverbs device that becomes readable
// when the kernel has an event for it; ibv_get_async_event then takes one (blocking unless the
// fd is O_NONBLOCK). An emulated context gets the same from an AsyncEventQueue: an eventfd in
// semaphore mode, readable while events wait, counting them; get() takes one event and one count,
// or fails with EAGAIN when none waits, as libibverbs does on a non-blocking fd.
//
// Port events go to every open context of the device, as the kernel sends them to every uverbs
// file of it: PortEvents, one per emulated HCA, holds the contexts' queues and the state of each
// port. A port taken down (BRAID_IB_EMULATE_FAULT=port_down:N, emulated_faults.h, or a test)
// raises IBV_EVENT_PORT_ERR once on every context, and then carries nothing: its QPs send no
// request and serve none, so their outstanding writes end as on a fabric whose link went away,
// with IBV_WC_RETRY_EXC_ERR once the transport timeout runs out and the rest flushed.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace braid::transport::ib::emulated {

class AsyncEventQueue {
 public:
  AsyncEventQueue();
  ~AsyncEventQueue();
  AsyncEventQueue(const AsyncEventQueue&) = delete;
  AsyncEventQueue& operator=(const AsyncEventQueue&) = delete;

  /// Readable (POLLIN) while an event waits; -1 where no eventfd could be made.
  int fd() const { return fd_; }
  void push(const ibv_async_event& event);
  /// The oldest waiting event: 0, or -1 with errno EAGAIN when none waits.
  int get(ibv_async_event* out);

 private:
  int fd_ = -1;
  std::mutex mu_;
  std::deque<ibv_async_event> events_;
};

class PortEvents {
 public:
  /// `device` names the HCA in the log ("emu_0").
  explicit PortEvents(std::string device) : device_(std::move(device)) {}

  void subscribe(AsyncEventQueue* queue);
  void unsubscribe(AsyncEventQueue* queue);

  /// Whether `port` (1..32) was taken down.
  bool down(uint8_t port) const {
    return port >= 1 && port <= 32 && (down_.load() & (1u << (port - 1))) != 0;
  }
  /// Takes `port` down and raises IBV_EVENT_PORT_ERR on every subscribed context; a port already
  /// down raises nothing more.
  void takeDown(uint8_t port);

 private:
  const std::string device_;
  std::atomic<uint32_t> down_{0};  ///< bit p - 1: port p is down
  std::mutex mu_;
  std::vector<AsyncEventQueue*> queues_;
};

}  // namespace braid::transport::ib::emulated
