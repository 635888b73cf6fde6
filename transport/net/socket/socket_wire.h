// A socket FIFO's connection as its proxies use it: how a slot travels on it, and what a proxy
// does when it breaks. Every socket FIFO end (host, GPU, striped) goes through here, so that
// they frame slots alike and report a broken connection alike.
//
// A slot travels as an 8-byte word (its byte count; on a GPU FIFO with the last-slice flag),
// then its bytes. A connection that breaks under a live end (a send refused, a reset, an end of
// file in the middle of a slot, a slot larger than the FIFO's) is logged and told to the
// communicator (LinkWatch), which ends every call waiting on it at once. Not told: an
// end going away (its connection is ours to end) and a peer that closed in order between slots
// (it went away itself, and its own end or the watch of the ranks says why).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/deadline.h"
#include "base/socket.h"
#include "base/socket_address.h"
#include "base/socket_io.h"
#include "transport/link_failure.h"
#include "transport/net/proxy_waits.h"

namespace braid::transport::socket {

/// Sends one slot: its word, then its `bytes` bytes. Where BRAID_SOCKET_EMULATE_FAULT asks for
/// it (socket_fault.h), breaks the connection after the word instead.
braid::sockets::IoResult sendSlot(const braid::sockets::Socket& socket, uint64_t word,
                                  const void* data, size_t bytes);

/// Whom a FIFO end's connections lead to and whom it tells when one breaks.
class SocketLink {
 public:
  SocketLink(int peer, LinkWatch watch)
      : peer_(peer),
        onFailure_(std::move(watch.onFailure)),
        stopped_(std::move(watch.stopped)),
        proxyEvents_(std::move(watch.proxyEvents)),
        channel_(watch.channel) {}

  int peer() const { return peer_; }
  /// The proxy events of this link's end that sends (`isSend`) or receives slots of
  /// `slotBytes`: off where no profiler asked for them (base/proxy_events.h).
  profile::ProxyEventTrack proxyEvents(bool isSend, size_t slotBytes) const {
    return profile::ProxyEventTrack(proxyEvents_, {peer_, channel_, isSend, slotBytes});
  }
  /// How long a send end going away may spend sending what was posted: net::kDrainMs, cut short
  /// once the communicator stopped (LinkWatch).
  Deadline drainDeadline() const {
    return Deadline::afterMs(net::kDrainMs).cancelledBy(stopped_.get());
  }
  /// A transfer on the connection `ends` (taken while it was up) ended as `io` says; `what` is
  /// "sending to" or "receiving from", `midSlot` whether part of a slot had come. Logs it and,
  /// unless `goingAway` or the peer closed in order between slots, tells the communicator.
  void broke(const char* what, const braid::sockets::ConnectionEnds& ends,
             const braid::sockets::IoResult& io, bool midSlot, bool goingAway) const;
  /// The peer broke the protocol on `ends` as `what` says: logged and told.
  void broke(const std::string& what, const braid::sockets::ConnectionEnds& ends,
             bool goingAway) const;

 private:
  void report(const std::string& why, bool goingAway) const;

  int peer_;
  LinkFailureHandler onFailure_;
  std::shared_ptr<const std::atomic<bool>> stopped_;
  std::shared_ptr<profile::ProxyEventSink> proxyEvents_;
  int channel_ = 0;
};

}  // namespace braid::transport::socket
