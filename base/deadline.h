// A point in time after which a blocking wait gives up (BRAID_TIMEOUT_MS).
//
// A deadline may also be cancelled by a flag that another thread raises (ncclCommAbort on a
// communicator still being created, a peer found dead): it then counts as expired, and a wait
// that sleeps in poll() asks pollMs() for its timeout, which is never longer than kCancelSliceMs
// while the flag could still rise, so the flag is seen within one slice.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>

namespace braid {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  /// The longest sleep of a cancellable wait.
  static constexpr int64_t kCancelSliceMs = 10;

  /// A deadline `ms` milliseconds from now; ms <= 0 means never.
  static Deadline afterMs(int64_t ms) {
    Deadline d;
    if (ms > 0) {
      d.never_ = false;
      d.when_ = Clock::now() + std::chrono::milliseconds(ms);
    }
    return d;
  }
  /// afterMs's deadline, read from the kernel's tick clock (CLOCK_MONOTONIC_COARSE, the
  /// monotonic clock as of the last tick): 9 ns where a precise read costs 45 (a 2026 EPYC VM),
  /// for the deadline every call makes and hardly any reaches. It is a tick late by design,
  /// and as early as the tick clock lags behind that: by nothing on a quiet machine, by a few
  /// ms on a loaded VM (6.8 ms measured at load 12 with 4 ms ticks). For a timeout of seconds
  /// (BRAID_TIMEOUT_MS) that is noise; a wait that must not end a moment early uses afterMs.
  static Deadline afterMsCoarse(int64_t ms) {
    Deadline d;
    if (ms > 0) {
      d.never_ = false;
      d.when_ = coarseNow() + coarseTick() + std::chrono::milliseconds(ms);
    }
    return d;
  }
  static Deadline never() { return Deadline(); }

  /// This deadline, also over as soon as `*flag` is true (nullptr: not cancellable).
  Deadline cancelledBy(const std::atomic<bool>* flag) const {
    Deadline d = *this;
    d.cancel_ = flag;
    return d;
  }
  const std::atomic<bool>* cancelFlag() const { return cancel_; }
  bool cancelled() const { return cancel_ != nullptr && cancel_->load(std::memory_order_relaxed); }

  /// Whether there is no time limit (a cancel flag may still end the wait).
  bool isNever() const { return never_; }
  bool expired() const { return cancelled() || (!never_ && Clock::now() >= when_); }
  /// Milliseconds left, clamped to [0, cap]; `cap` when there is no deadline; 0 once cancelled.
  int64_t remainingMs(int64_t cap = INT32_MAX) const {
    if (cancelled()) return 0;
    if (never_) return cap;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when_ - Clock::now()).count();
    if (left < 0) return 0;
    return left < cap ? left : cap;
  }
  /// The timeout to give poll(): -1 (forever) only when nothing can end the wait early.
  /// Rounded up: a wait with less than a millisecond left sleeps that millisecond rather than
  /// spinning through poll(0) calls until the deadline passes.
  int pollMs() const {
    if (never_ && cancel_ == nullptr) return -1;
    const int64_t cap = cancel_ != nullptr ? kCancelSliceMs : INT32_MAX;
    if (cancelled()) return 0;
    if (never_) return static_cast<int>(cap);
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(when_ - Clock::now()).count();
    return static_cast<int>(left < 0 ? 0 : (left < cap ? left : cap));
  }

 private:
  static Clock::time_point coarseNow() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return Clock::time_point(std::chrono::seconds(ts.tv_sec) +
                             std::chrono::nanoseconds(ts.tv_nsec));
  }
  static Clock::duration coarseTick() {
    static const Clock::duration tick = [] {
      timespec res{};
      clock_getres(CLOCK_MONOTONIC_COARSE, &res);
      return Clock::duration(std::chrono::seconds(res.tv_sec) +
                             std::chrono::nanoseconds(res.tv_nsec));
    }();
    return tick;
  }

  bool never_ = true;
  Clock::time_point when_{};
  const std::atomic<bool>* cancel_ = nullptr;
};

}  // namespace braid
