// Waiting for what a peer publishes in a shared segment that any number of
// ranks may wait on at once.
//
// futex::waitUntil (base/futex.h) serves a FIFO, which has one waiter; a
// board that every rank reads needs a wake word that several readers can
// sleep on together. So the owner of the segment keeps two words, each on
// its own cache line:
//
//   wake      bumped by the owner when it publishes and finds sleepers
//   sleepers  how many readers may be asleep on `wake`
//
// A reader spins, yields, then counts itself in `sleepers`, fences, reads
// `wake`, checks its condition once more and sleeps on `wake` in slices
// short enough to see the deadline and the abort flag. The owner publishes,
// fences (seq_cst) and wakes everybody when `sleepers` is not zero: either
// the reader sees the data, or the owner sees the sleeper (the two fences
// order the pairs), and the kernel's recheck of `wake` closes the gap
// between the reader's load of it and its sleep. An owner that publishes
// with a compiler barrier alone (base/membarrier.h) leaves its half of the
// fence to the reader: `fencelessOwner` makes the reader force a barrier on
// every registered process before it reads `wake`.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>

#include "base/futex.h"
#include "base/membarrier.h"
#include "braid/status.h"
#include "transport/connection.h"

namespace braid::exec {

/// The owner's wake word and its sleepers, each on its own cache line.
struct WakeWords {
  alignas(128) std::atomic<uint32_t> wake{0};
  alignas(128) std::atomic<uint32_t> sleepers{0};
};

/// The owner's half: call after publishing, with a seq_cst fence between.
inline void wakeSleepers(WakeWords& words) {
  if (words.sleepers.load(std::memory_order_relaxed) == 0) return;
  words.wake.fetch_add(1, std::memory_order_release);
  futex::wake(&words.wake, INT_MAX);
}

/// Blocks until ready() holds, where ready() reads what `peer` (the owner of
/// `words`) publishes. Spins for wait.spinNs, yields, then sleeps; a wait
/// past wait.deadline or cut short by wait.abort fails naming the peer.
template <typename Ready>
Status waitForPeer(WakeWords& words, int peer, const transport::WaitContext& wait, Ready ready,
                   bool fencelessOwner = false) {
  if (ready()) return Status();
  constexpr int kPollsPerClockRead = 64;
  // Most waits of a tiny call end within a few polls: the clock is read only once one batch of
  // them has passed, and the spin's time counts from there.
  if (wait.spinNs > 0) {
    for (int i = 0; i < kPollsPerClockRead; ++i) {
      futex::cpuRelax();
      if (ready()) return Status();
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const auto spinUntil = start + std::chrono::nanoseconds(wait.spinNs);
  while (wait.spinNs > 0) {
    for (int i = 0; i < kPollsPerClockRead; ++i) {
      futex::cpuRelax();
      if (ready()) return Status();
    }
    if (std::chrono::steady_clock::now() >= spinUntil) break;
  }
  for (int i = 0; i < futex::kYields; ++i) {
    sched_yield();
    if (ready()) return Status();
  }
  for (;;) {
    if (wait.abort != nullptr && wait.abort->load(std::memory_order_relaxed)) {
      return futex::abortedError(peer);
    }
    if (wait.deadline.expired()) {
      if (ready()) return Status();
      const auto elapsed = std::chrono::steady_clock::now() - start;
      return futex::timedOutError(
          std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), peer);
    }
    const int64_t sliceMs = std::max<int64_t>(1, wait.deadline.remainingMs(futex::kSliceMs));
    words.sleepers.fetch_add(1, std::memory_order_relaxed);
    if (fencelessOwner) {
      membarrier::heavyGlobal();
    } else {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    const uint32_t seen = words.wake.load(std::memory_order_acquire);
    const bool done = ready();
    if (!done) futex::wait(&words.wake, seen, sliceMs * 1000 * 1000);
    words.sleepers.fetch_sub(1, std::memory_order_relaxed);
    if (done || ready()) return Status();
  }
}

}  // namespace braid::exec
