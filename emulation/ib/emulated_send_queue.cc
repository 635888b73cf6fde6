// The emulated requester's queue and its ACK clock: see emulated_send_queue.h.
#include "emulation/ib/emulated_send_queue.h"

#include <algorithm>
#include <utility>

namespace braid::transport::ib::emulated {

void SendQueue::post(SendWork work, Clock::time_point now) {
  if (outstanding() == 0) headSince_ = now;
  unsent_.push_back(std::move(work));
}

SendWork SendQueue::takeNext() {
  SendWork work = std::move(unsent_.front());
  unsent_.pop_front();
  const bool read = work.header.opcode == wire::Opcode::kRdmaRead;
  inFlight_.push_back(
      {{work.wrId, work.signaled, read, read ? work.sges : std::vector<ibv_sge>{}}, false});
  return work;
}

void SendQueue::markLastTakenLocalError() {
  if (inFlight_.empty()) return;
  inFlight_.back().localError = true;
  localErrorPending_ = true;
}

void SendQueue::noteTransmitProgress(Clock::time_point now) {
  // Only the head's clock runs; a later request's bytes say nothing about the head's ACK.
  if (inFlight_.size() == 1) headSince_ = std::max(headSince_, now);
}

void SendQueue::noteRnrWait(Clock::time_point now, Clock::duration wait) {
  headSince_ = std::max(headSince_, now + wait);
}

std::optional<SendQueue::Finished> SendQueue::popAnswered(Clock::time_point now) {
  if (inFlight_.empty() || inFlight_.front().localError) return std::nullopt;
  Finished finished = inFlight_.front().finished;
  inFlight_.pop_front();
  headSince_ = now;
  return finished;
}

std::optional<SendQueue::Finished> SendQueue::popHead() {
  if (!inFlight_.empty()) {
    Finished finished = inFlight_.front().finished;
    inFlight_.pop_front();
    return finished;
  }
  if (!unsent_.empty()) {
    Finished finished{unsent_.front().wrId,
                      unsent_.front().signaled,
                      unsent_.front().header.opcode == wire::Opcode::kRdmaRead,
                      {}};
    unsent_.pop_front();
    return finished;
  }
  return std::nullopt;
}

std::vector<SendQueue::Finished> SendQueue::drain() {
  std::vector<Finished> all;
  while (auto finished = popHead()) all.push_back(*finished);
  localErrorPending_ = false;
  return all;
}

Clock::time_point SendQueue::headDeadline(Clock::duration timeout) const {
  if (outstanding() == 0 || timeout == Clock::duration::zero()) return Clock::time_point::max();
  return headSince_ + timeout;
}

}  // namespace braid::transport::ib::emulated
