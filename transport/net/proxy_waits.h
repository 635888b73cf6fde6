// How the proxies of the network transports wait, the socket ones (socket/socket_proxy.h,
// socket/socket_stripes.h) and the verbs ones (ib/ib_fifo_pump.h, ib/ib_proxy.h) alike: the drain
// of a send end going away, the pauses of a thread that polls memory nobody wakes it for, and
// the doorbell that cuts a polling proxy's pauses short when a call is about to give it work.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "base/deadline.h"
#include "base/futex.h"

namespace braid::transport::net {

// How long a send end that goes away keeps sending what its executor posted. A host collective
// completes on a rank once its own steps are done, so its last slots may still be in the local
// FIFO when the communicator is destroyed; its peer still needs them. Bounded, for a peer that
// is gone and reads nothing.
inline constexpr int64_t kDrainMs = 10000;

/// A send end going away: waits, in sleeps of 200 us, until `drained()` (its proxy sent what was
/// posted, or can send no more) or `deadline` (kDrainMs, or cancelled).
template <typename Drained>
void waitDrained(const Deadline& deadline, Drained drained) {
  while (!drained() && !deadline.expired()) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

/// The pauses of a proxy between polls that found nothing to move: a few yields, then sleeps
/// that double up to kMaxPauseUs, short next to a slot's time on the wire.
class PollPauses {
 public:
  static constexpr int kYields = 16;
  static constexpr int kMaxPauseUs = 50;

  /// Something moved: the next pauses start short again.
  void reset() {
    polls_ = 0;
    pause_ = std::chrono::microseconds(1);
  }
  /// Nothing moved. Once the yields are over, a positive `idleSleep` (the caller has been idle
  /// long) takes the place of the growing sleeps.
  void pause(std::chrono::microseconds idleSleep = std::chrono::microseconds(0)) {
    pauseWith(idleSleep, [](std::chrono::microseconds d) { std::this_thread::sleep_for(d); });
  }
  /// The same, sleeping by `sleep(duration)`, which may end early (Doorbell::sleep).
  template <typename Sleep>
  void pauseWith(std::chrono::microseconds idleSleep, Sleep sleep) {
    if (polls_ < kYields) {
      ++polls_;
      std::this_thread::yield();
    } else if (idleSleep.count() > 0) {
      sleep(idleSleep);
    } else {
      sleep(pause_);
      pause_ = std::min(pause_ * 2, std::chrono::microseconds(kMaxPauseUs));
    }
  }

 private:
  int polls_ = 0;
  std::chrono::microseconds pause_{1};
};

/// What cuts a polling proxy's sleeps short. A call that is about to give the proxy work (its
/// FIFOs' slots, which the proxy finds only by polling) rings it first, so that a proxy asleep
/// after an idle spell (a compute phase) polls again within a futex wake, not a whole sleep:
/// the wake overlaps the call's own start (its launch, its first step). Costs a caller one
/// atomic add, and a futex wake only while the proxy sleeps.
class Doorbell {
 public:
  /// From any thread: the proxy's next pass runs without a pause.
  void ring() {
    rings_.fetch_add(1, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst) != 0) futex::wake(&rings_, 1);
  }
  /// On the proxy, before a pass: what rang so far, for sleep().
  uint32_t rung() const { return rings_.load(std::memory_order_seq_cst); }
  /// On the proxy, after a pass that moved nothing: sleeps up to `d` unless it rang since
  /// `rungBefore` (or rings meanwhile).
  void sleep(uint32_t rungBefore, std::chrono::microseconds d) {
    // Dekker's handshake with ring(): either it sees sleeping_ and wakes us, or we see its add.
    sleeping_.store(1, std::memory_order_seq_cst);
    if (rings_.load(std::memory_order_seq_cst) == rungBefore) {
      futex::wait(&rings_, rungBefore, std::chrono::nanoseconds(d).count());
    }
    sleeping_.store(0, std::memory_order_relaxed);
  }

 private:
  std::atomic<uint32_t> rings_{0};
  std::atomic<uint32_t> sleeping_{0};
};

/// How a proxy that polls every end it drives (the verbs proxy, a network plugin's) paces its
/// passes: after one that moved nothing, PollPauses' yields and growing sleeps, and once it has
/// been idle kIdleAfterMs, sleeps of kIdlePauseUs, so that an idle process keeps its cores free.
/// Every sleep is a Doorbell's, which a call about to give the proxy work ends (wake()).
class PolledPacing {
 public:
  static constexpr int64_t kIdleAfterMs = 200;
  static constexpr int kIdlePauseUs = 1000;

  /// From any thread: work is coming; the proxy's next pass runs without a pause.
  void wake() { doorbell_.ring(); }
  /// On the proxy, before a pass.
  void passStarts() { rung_ = doorbell_.rung(); }
  /// On the proxy, after it: a pause, unless the pass moved something or the doorbell rang.
  void passEnded(bool moved) {
    if (moved || doorbell_.rung() != rung_) {
      pauses_.reset();
      idleSince_ = Deadline::afterMs(kIdleAfterMs);
      return;
    }
    pauses_.pauseWith(std::chrono::microseconds(idleSince_.expired() ? kIdlePauseUs : 0),
                      [this](std::chrono::microseconds d) { doorbell_.sleep(rung_, d); });
  }

 private:
  Doorbell doorbell_;
  PollPauses pauses_;
  Deadline idleSince_ = Deadline::afterMs(kIdleAfterMs);
  uint32_t rung_ = 0;  ///< the doorbell's count when the pass began
};

/// Polls until `ready()`, or until `giveUp()` (then answers ready() once more), with PollPauses
/// between. For proxies that wait on memory nobody wakes them for: a kernel's FIFO, or one
/// several threads share.
template <typename Ready, typename GiveUp>
bool pollWithPauses(Ready ready, GiveUp giveUp) {
  PollPauses pauses;
  for (;;) {
    if (ready()) return true;
    if (giveUp()) return ready();
    pauses.pause();
  }
}

}  // namespace braid::transport::net
