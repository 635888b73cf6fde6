// The responder side of one emulated RC QP: a thread per accepted connection that reads the
// peer's requests, strictly in order, checks each as an HCA does and carries it out.
//
// For every RDMA write: the QP must be in RTR or RTS and allow remote writes (qp_access_flags);
// the rkey must name a live region of this HCA, in the QP's protection domain, that allows remote
// writes and holds [remote_addr, remote_addr + length). A write with immediate also needs a posted
// receive; without one it waits as the requester's rnr_retry allows (RNR), then is refused. A
// write that passes is copied into memory; then, with immediate, its receive completes; then the
// ACK goes back. A write that fails any check writes nothing: a NAK goes back, and the QP goes to
// ERR (the emulation's choice; a real responder may stay up) except after RNR, which leaves the
// responder's QP as it was. After a NAK, or bytes that make no request, the connection closes.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "base/socket.h"
#include "emulation/ib/emulated_hca_wire.h"

namespace braid::transport::ib::emulated {

class QueuePair;

/// Answers a hello; false when the reply could not be sent.
bool sendHelloReply(const ::braid::sockets::Socket& connection, wire::HelloVerdict verdict);

class ResponderLink {
 public:
  /// Serves `connection` (non-blocking) for `qp` while the QP stays in `epoch`.
  ResponderLink(QueuePair& qp, ::braid::sockets::Socket connection, const wire::Hello& hello,
                uint64_t epoch);
  /// Stops and joins the thread.
  ~ResponderLink();
  ResponderLink(const ResponderLink&) = delete;
  ResponderLink& operator=(const ResponderLink&) = delete;

  /// Makes the thread end soon (it may still finish a copy, and closes the connection as
  /// described at closeGracefully). Thread safe, never blocks; the QP also wakes its receive
  /// wait.
  void stop();
  /// The thread has ended: destroying the link does not wait.
  bool finished() const { return finished_; }

 private:
  void run();
  /// Reads one request and carries it out; false when the connection is done.
  bool serveOne();
  /// An RDMA read: the QP must allow remote reads and the region `rkey` names too; the answer
  /// is kReadData and the bytes.
  bool serveRead(const wire::RequestHeader& request);
  bool receivePayload(uint64_t length);
  bool respond(wire::ResponseKind kind, uint32_t value = 0);
  /// Reads or writes all of `bytes`; false when the connection ended, failed, timed out (writes
  /// only) or the link was stopped.
  bool readFully(void* data, size_t bytes);
  bool writeFully(const void* data, size_t bytes);
  /// Waits for `events` on the socket; false when the link was stopped or `deadline` passed first.
  bool waitSocket(short events, const Deadline& deadline);
  /// Ends the connection without losing the answers sent on it: a FIN after them, then what the
  /// requester still sends is read and dropped until it closes (for a moment at most). Closing
  /// with unread bytes would send a reset, and a reset may destroy answers not yet read.
  void closeGracefully();

  QueuePair& qp_;
  ::braid::sockets::Socket socket_;
  const wire::Hello hello_;
  const uint64_t epoch_;
  const int wakeFd_;  ///< an eventfd: readable once stop() was called
  std::vector<uint8_t> payload_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> finished_{false};
  std::thread thread_;  // last: it uses everything above
};

}  // namespace braid::transport::ib::emulated
