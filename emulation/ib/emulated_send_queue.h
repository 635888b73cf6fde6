// The requester's bookkeeping of one emulated QP: work posted but not yet sent, work sent but
// not yet answered, and the clock that decides when the oldest of it has waited too long.
//
// The clock follows a real requester's local ACK timer: it runs for the oldest unanswered work
// request (the head) and restarts whenever the responder shows progress: an ACK (the next
// request becomes the head), bytes of the head leaving through TCP while it is the only request
// in flight (a large write still being carried), or an RNR notice (the responder is alive and
// waiting for a receive; the notice says how long until its next word). A head that has not been
// sent at all (no connection yet) is timed from when it became the head, so an unreachable peer
// fails the same way as a silent one.
//
// Not thread safe: QueuePair guards it with its own mutex.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "emulation/ib/emulated_hca_wire.h"

namespace braid::transport::ib::emulated {

using Clock = std::chrono::steady_clock;

/// One RDMA write (with or without immediate) or RDMA read as posted.
struct SendWork {
  uint64_t wrId = 0;
  bool signaled = false;
  wire::RequestHeader header;
  std::vector<ibv_sge> sges;        ///< read when the write is sent (not inline); a read's
                                    ///< destination, written when its data comes back
  bool isInline = false;            ///< IBV_SEND_INLINE: the data was copied at post time
  std::vector<uint8_t> inlineData;  ///< that copy
};

class SendQueue {
 public:
  /// A request that left the queue: what its completion needs.
  struct Finished {
    uint64_t wrId = 0;
    bool signaled = false;
    bool read = false;              ///< an RDMA read: it completes as one, with its data
    std::vector<ibv_sge> readInto;  ///< where a read's data goes
  };

  /// Posted and not yet answered (nor flushed): what counts against max_send_wr.
  size_t outstanding() const { return unsent_.size() + inFlight_.size(); }
  void post(SendWork work, Clock::time_point now);
  /// Work to send next; none after a local protection error until the QP leaves RTS.
  bool hasUnsent() const { return !unsent_.empty() && !localErrorPending_; }
  /// The next request to send; it counts as in flight from now on.
  SendWork takeNext();
  /// The request taken last cannot be sent (its local SGEs failed their checks). It completes
  /// with an error once everything before it is answered.
  void markLastTakenLocalError();
  /// The head is a request that failed locally: it is answered by itself (LOC_PROT_ERR).
  bool headFailedLocally() const { return !inFlight_.empty() && inFlight_.front().localError; }
  /// The head was sent and waits for its answer.
  bool awaitingAnswer() const { return !inFlight_.empty() && !inFlight_.front().localError; }
  /// The head that awaits its answer (awaitingAnswer() must hold).
  const Finished& head() const { return inFlight_.front().finished; }

  /// Bytes of the last taken request left through TCP.
  void noteTransmitProgress(Clock::time_point now);
  /// The responder waits for a receive and will say more within `wait`.
  void noteRnrWait(Clock::time_point now, Clock::duration wait);

  /// The answered head leaves (ACK or NAK); nullopt when nothing was sent to answer.
  std::optional<Finished> popAnswered(Clock::time_point now);
  /// The head leaves unanswered (a timeout, a local error); nullopt when the queue is empty.
  std::optional<Finished> popHead();
  /// Everything leaves: the QP moved to ERR (flush) or RESET (dropped).
  std::vector<Finished> drain();

  /// When the head's time runs out with `timeout` per head (Clock::time_point::max() when
  /// nothing is outstanding or `timeout` is zero, which means infinite).
  Clock::time_point headDeadline(Clock::duration timeout) const;

 private:
  struct InFlight {
    Finished finished;
    bool localError = false;
  };

  std::deque<SendWork> unsent_;
  std::deque<InFlight> inFlight_;
  bool localErrorPending_ = false;
  Clock::time_point headSince_{};
};

}  // namespace braid::transport::ib::emulated
