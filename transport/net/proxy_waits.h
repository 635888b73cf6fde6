// How the proxies of the network transports wait, the socket ones (proxy_thread.h,
// socket_stripes.h) and the verbs ones (ib/ib_fifo_pump.h) alike: the drain of a send end going
// away, and the pauses of a thread that polls memory nobody wakes it for.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include "base/deadline.h"

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

/// Polls until `ready()`, or until `giveUp()` (then answers ready() once more): a few yields,
/// then pauses that grow to 50 us, short next to a slot's time on the wire. For proxies that
/// wait on memory nobody wakes them for: a kernel's FIFO, or one several threads share.
template <typename Ready, typename GiveUp>
bool pollWithPauses(Ready ready, GiveUp giveUp) {
  auto pause = std::chrono::microseconds(1);
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if (giveUp()) return ready();
    if (i < 16) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(50));
    }
  }
}

}  // namespace braid::transport::net
