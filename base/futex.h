// Blocking on a 32-bit word that another thread or process changes.
//
// The transports keep their FIFO counters in memory that both ends map, so
// a waiter cannot use a condition variable: the poster may be another
// process. A futex lets the waiter sleep in the kernel on the counter word
// itself. The ops used here are the shared (non-private) ones, which the
// kernel keys by the page behind the address, so they work across processes
// and across two mappings of one segment in the same process.
//
// waitUntil() is the one blocking loop every transport uses. It spins first
// (a round trip between two spinning cores is a few hundred nanoseconds and a
// syscall would dominate it), then yields the core a few times, then sleeps
// in the kernel in short slices so that the deadline and the comm's abort
// flag are seen within one slice even if nobody wakes it. When ranks
// outnumber cores, that sleep is what lets the peer run at all.
//
// The sleeping side announces itself in a `waiting` word so that the
// poster makes the wake syscall only when someone may be asleep:
//
//   waiter:  waiting = 1 (seq_cst); v = word (seq_cst); if (!ready(v)) wait(word, v)
//   poster:  word = new (seq_cst); if (waiting (seq_cst)) wake(word)
//
// With both pairs sequentially consistent, either the waiter sees the new
// value and does not sleep, or the poster sees the announcement and wakes
// it; the kernel rechecks word == v before sleeping, closing the gap between
// the waiter's load and its sleep.
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "base/deadline.h"
#include "braid/status.h"

namespace braid::futex {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "futexes need std::atomic<uint32_t> to be a plain 32-bit word");

enum class WaitResult {
  kWoken,         ///< a wake arrived (or a spurious wakeup; recheck the word)
  kValueChanged,  ///< the word no longer held `expected` when the kernel looked
  kTimedOut,      ///< the timeout passed
  kInterrupted,   ///< a signal arrived
};

/// Sleeps while `*word == expected`, at most `timeoutNs` (forever if < 0).
WaitResult wait(const uint32_t* word, uint32_t expected, int64_t timeoutNs);

/// Wakes up to `count` sleepers on `word`; returns how many were woken.
int wake(const uint32_t* word, int count = 1);

// The same for words declared as std::atomic (the static_assert above: the
// same 32 bits). The FIFOs the GPU shares declare plain words, which the
// CPU accesses with the __atomic builtins (kernels/engine/sync.h).
inline const uint32_t* wordOf(const std::atomic<uint32_t>* word) {
  return reinterpret_cast<const uint32_t*>(word);
}
inline WaitResult wait(const std::atomic<uint32_t>* word, uint32_t expected, int64_t timeoutNs) {
  return wait(wordOf(word), expected, timeoutNs);
}
inline int wake(const std::atomic<uint32_t>* word, int count = 1) {
  return wake(wordOf(word), count);
}

/// Tells the CPU this is a spin loop (x86 `pause`, Arm `yield`).
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

/// Sched_yield calls between spinning and sleeping. With more ranks than
/// cores, yielding hands the core to the rank being waited for without the
/// futex round trip, whose wake-up took 200-500 us on a VM here; 16 yields
/// instead of 4 halved the 8 B all_reduce time of 8 ranks on 2 cores.
inline constexpr int kYields = 16;
/// The longest single sleep, which bounds how late the deadline or the
/// abort flag is noticed.
inline constexpr int64_t kSliceMs = 10;

/// The error of a wait that ran out of time: "timed out after N ms waiting for rank P".
Status timedOutError(int64_t elapsedMs, int peer);
/// The error of a wait cut short by the abort flag.
Status abortedError(int peer);

/// Blocks until `ready(word.load())` holds. `ctx` is a transport::WaitContext
/// (util sits below transport and cannot name it; any type with the same
/// fields works): its deadline, abort flag and spin budget bound the wait.
/// `waiting` is this side's announcement word (see the top of this file);
/// whoever changes `word` must check it and call wake(&word).
/// Returns kRemoteError on timeout or abort.
template <typename Context, typename Ready>
Status waitUntil(const uint32_t* word, uint32_t* waiting, const Context& ctx, Ready ready) {
  auto load = [word](int order) { return __atomic_load_n(word, order); };
  if (ready(load(__ATOMIC_ACQUIRE))) return Status();
  const auto start = std::chrono::steady_clock::now();
  // Poll in bursts of kPollsPerClockRead so reading the clock stays cheap
  // next to the pauses.
  constexpr int kPollsPerClockRead = 64;
  const auto spinUntil = start + std::chrono::nanoseconds(ctx.spinNs);
  while (ctx.spinNs > 0) {
    for (int i = 0; i < kPollsPerClockRead; ++i) {
      cpuRelax();
      if (ready(load(__ATOMIC_ACQUIRE))) return Status();
    }
    if (std::chrono::steady_clock::now() >= spinUntil) break;
  }
  for (int i = 0; i < kYields; ++i) {
    sched_yield();
    if (ready(load(__ATOMIC_ACQUIRE))) return Status();
  }
  for (;;) {
    if (ctx.abort != nullptr && ctx.abort->load(std::memory_order_relaxed)) {
      return abortedError(ctx.peer);
    }
    if (ctx.deadline.expired()) {
      if (ready(load(__ATOMIC_ACQUIRE))) return Status();
      auto elapsed = std::chrono::steady_clock::now() - start;
      return timedOutError(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(),
                           ctx.peer);
    }
    // remainingMs() rounds down; never ask for a zero-length sleep.
    int64_t sliceMs = ctx.deadline.remainingMs(kSliceMs);
    if (sliceMs < 1) sliceMs = 1;
    __atomic_store_n(waiting, 1, __ATOMIC_SEQ_CST);
    uint32_t seen = load(__ATOMIC_SEQ_CST);
    if (ready(seen)) {
      __atomic_store_n(waiting, 0, __ATOMIC_RELAXED);
      return Status();
    }
    wait(word, seen, sliceMs * 1000 * 1000);
    __atomic_store_n(waiting, 0, __ATOMIC_RELAXED);
    if (ready(load(__ATOMIC_ACQUIRE))) return Status();
  }
}

template <typename Context, typename Ready>
Status waitUntil(const std::atomic<uint32_t>& word, std::atomic<uint32_t>& waiting,
                 const Context& ctx, Ready ready) {
  return waitUntil(wordOf(&word), const_cast<uint32_t*>(wordOf(&waiting)), ctx, ready);
}

/// The poster's half of the protocol: call after publishing `word` with a
/// seq_cst store (or a release store followed by a seq_cst fence).
inline void wakeIfWaiting(const uint32_t* word, const uint32_t* waiting) {
  if (__atomic_load_n(waiting, __ATOMIC_SEQ_CST) != 0) wake(word);
}
inline void wakeIfWaiting(const std::atomic<uint32_t>& word, const std::atomic<uint32_t>& waiting) {
  wakeIfWaiting(wordOf(&word), wordOf(&waiting));
}

}  // namespace braid::futex
