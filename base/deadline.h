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
  int pollMs() const {
    if (never_ && cancel_ == nullptr) return -1;
    return static_cast<int>(remainingMs(cancel_ != nullptr ? kCancelSliceMs : INT32_MAX));
  }

 private:
  bool never_ = true;
  Clock::time_point when_{};
  const std::atomic<bool>* cancel_ = nullptr;
};

}  // namespace braid
