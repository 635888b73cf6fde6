// The requester side of one emulated RC QP: a thread that carries the QP's send queue to the
// HCA of the destination QP over one TCP connection, and turns its answers into completions.
//
// Once the QP is in RTS with a routable path, the thread connects to the peer HCA's listener (the
// destination GID's address, port dest_qp_num >> 8) and says hello; refused or unanswered
// attempts are retried every millisecond while work is waiting (backing off to 50 ms while none
// is), so a peer that is not in RTR yet, or not up yet, is waited for until the transport
// timeout, as a real requester retries until its retry count runs out. Then it sends each
// request in order (the local SGEs read and checked only now, as an HCA reads them when it
// executes the request) and hands each answer to the QP. A connection that breaks is silence: the
// thread sends nothing more and reconnects only when the QP starts over (RESET to RTS), so that
// outstanding work ends with the transport timeout, as on a fabric whose peer went away.
//
// One thread with non-blocking I/O: sends, answers, connection attempts, wake-ups (an eventfd:
// new work, a state change) and the QP's timeout all meet in one poll().
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "base/socket.h"
#include "emulation/ib/emulated_hca_wire.h"
#include "emulation/ib/emulated_qp.h"

namespace braid::transport::ib::emulated {

class Requester {
 public:
  explicit Requester(QueuePair& qp);
  /// Stops the thread and closes the connection; does not wait for anything the peer does.
  ~Requester();
  Requester(const Requester&) = delete;
  Requester& operator=(const Requester&) = delete;

  /// Makes the thread look at the QP again (new work, a new state). Thread safe, never blocks.
  void wake();

 private:
  enum class Link {
    kIdle,        ///< no connection; the next attempt is due at nextAttempt_
    kConnecting,  ///< connect() in progress
    kGreeting,    ///< hello sent, waiting for the reply
    kReady,       ///< requests flow
    kSilent,      ///< the connection broke: nothing more until the QP starts over
  };

  void run();
  /// One turn: act on the view, wait for the socket, the eventfd or a deadline, handle events.
  void turn(const QueuePair::RequesterView& view);
  void startAttempt(const QueuePair::RequesterView& view);
  void failAttempt(const QueuePair::RequesterView& view);
  void finishConnect(const QueuePair::RequesterView& view);
  void readHelloReply(const QueuePair::RequesterView& view);
  void readResponses();
  /// Takes the next request from the QP into txBuffer_; false when there is none to send.
  bool loadNextRequest();
  /// Sends what the socket takes; true when the whole request has gone.
  bool transmit();
  void goSilent();
  void drop();
  /// Waits for the wake eventfd and `events` on the socket, until `until` at most.
  short waitFor(short events, Clock::time_point until);

  QueuePair& qp_;
  const int wakeFd_;
  std::atomic<bool> stopping_{false};

  // The thread's own state.
  uint64_t epoch_ = ~uint64_t{0};
  Link link_ = Link::kIdle;
  ::braid::sockets::Socket socket_;
  Clock::time_point nextAttempt_{};
  Clock::time_point attemptStarted_{};
  Clock::duration idleBackoff_{};
  std::vector<uint8_t> txBuffer_;  ///< header and payload of the request being sent
  size_t txLength_ = 0;            ///< its length; 0 when none is being sent
  size_t txSent_ = 0;
  std::vector<uint8_t> rxBuffer_;  ///< answers (or the hello reply) read so far
  size_t rxHave_ = 0;

  std::thread thread_;  // last: it uses everything above
};

}  // namespace braid::transport::ib::emulated
