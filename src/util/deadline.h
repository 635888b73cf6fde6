// A point in time after which a blocking wait gives up (BRAID_TIMEOUT_MS).
#pragma once

#include <chrono>
#include <cstdint>

namespace braid {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

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

  bool isNever() const { return never_; }
  bool expired() const { return !never_ && Clock::now() >= when_; }
  /// Milliseconds left, clamped to [0, cap]; `cap` when there is no deadline.
  int64_t remainingMs(int64_t cap = INT32_MAX) const {
    if (never_) return cap;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when_ - Clock::now()).count();
    if (left < 0) return 0;
    return left < cap ? left : cap;
  }

 private:
  bool never_ = true;
  Clock::time_point when_{};
};

}  // namespace braid
