// What a network transport tells its communicator when a connection to a peer breaks under a
// live communicator: a verbs completion or post that failed, a socket that was reset or ended
// in the middle of a slot. The communicator then ends every call waiting on it at once
// (comm::Health::noteLinkFailure) instead of leaving them to their deadline.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "base/proxy_events.h"

namespace braid::transport {

/// Called at most once per broken FIFO end, on its proxy's thread, with the peer's rank and
/// words that say where it broke (the NIC, or the connection's addresses and interface) and how
/// (the verbs status, the system's error text). Empty: the break is only logged.
using LinkFailureHandler = std::function<void(int peer, const std::string& why)>;

/// What a FIFO end across hosts knows of its communicator: whom to tell when its connection
/// breaks, and the communicator's stop flag, raised when a peer is lost or the communicator
/// aborted. A send end going away sends what its executor posted first, since a completed call
/// may still have slots in flight; once the communicator stopped nobody needs them, and peers
/// that stopped too no longer read, so the end goes at once instead of waiting out the drain.
struct LinkWatch {
  LinkWatch() = default;
  /// A handler alone, with no stop flag (a test's end, a FIFO without a communicator).
  template <typename Handler,
            typename = std::enable_if_t<std::is_constructible_v<LinkFailureHandler, Handler>>>
  LinkWatch(Handler handler)  // NOLINT(google-explicit-constructor): a handler is a watch
      : onFailure(std::move(handler)) {}
  LinkWatch(LinkFailureHandler handler, std::shared_ptr<const std::atomic<bool>> stop)
      : onFailure(std::move(handler)), stopped(std::move(stop)) {}

  LinkFailureHandler onFailure;
  std::shared_ptr<const std::atomic<bool>> stopped;  // null: never stops early
  /// Where the end's proxy reports its proxy events (base/proxy_events.h), and the channel it
  /// serves; null: no profiler asked for them.
  std::shared_ptr<profile::ProxyEventSink> proxyEvents;
  int channel = 0;
};

}  // namespace braid::transport
