#include "base/line_latency.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace braid {
namespace {

constexpr int kRoundTrips = 64;  // a batch: tens of microseconds at most
constexpr int kMaxBatches = 32;  // more adds nothing to a minimum

bool pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct alignas(128) Line {
  std::atomic<int64_t> value{0};
};

}  // namespace

double lineTransferNs(int a, int b, std::chrono::microseconds budget) {
  if (a == b || a < 0 || b < 0 || a >= CPU_SETSIZE || b >= CPU_SETSIZE) return -1;
  Line ping, pong;
  std::atomic<bool> pinned{true};
  constexpr int64_t kStop = -1;
  // The echo: answers each ping with its number, until told to stop.
  std::thread echo([&] {
    if (!pinTo(b)) pinned.store(false);
    int64_t seen = 0;
    for (;;) {
      const int64_t v = ping.value.load(std::memory_order_acquire);
      if (v == kStop) return;
      if (v != seen) {
        seen = v;
        pong.value.store(v, std::memory_order_release);
      }
    }
  });
  double best = -1;
  std::thread probe([&] {
    if (!pinTo(a)) pinned.store(false);
    const int64_t end = nowNs() + std::chrono::nanoseconds(budget).count();
    int64_t n = 0;
    bool late = false;
    for (int batch = 0; batch < kMaxBatches && pinned.load() && !late && nowNs() < end; ++batch) {
      const int64_t start = nowNs();
      for (int i = 0; i < kRoundTrips && !late; ++i) {
        ping.value.store(++n, std::memory_order_release);
        // The clock is read only now and then: it costs as much as a short trip.
        for (uint32_t spins = 1; pong.value.load(std::memory_order_acquire) != n; ++spins) {
          if (spins % 1024 == 0 && nowNs() > end) {
            late = true;  // the echo is not running: give up with what was measured
            break;
          }
        }
      }
      if (late) break;
      // A batch the scheduler interrupted is slower than an undisturbed one: the least wins.
      const double oneWay = static_cast<double>(nowNs() - start) / (2.0 * kRoundTrips);
      best = best < 0 ? oneWay : std::min(best, oneWay);
    }
    ping.value.store(kStop, std::memory_order_release);
  });
  probe.join();
  echo.join();
  return pinned.load() ? best : -1;
}

double recentLineTransferNs(int a, int b, std::chrono::seconds maxAge) {
  struct Measured {
    double ns;
    int64_t atNs;
  };
  static std::mutex mutex;
  static std::map<std::pair<int, int>, Measured> measured;
  // Held through the measurement: two communicators made at once on threads of this process
  // would otherwise pin four threads to two CPUs and measure each other.
  std::lock_guard<std::mutex> lock(mutex);
  const int64_t now = nowNs();
  const auto it = measured.find({a, b});
  if (it != measured.end() && now - it->second.atNs < std::chrono::nanoseconds(maxAge).count()) {
    return it->second.ns;
  }
  const double ns = lineTransferNs(a, b);
  measured[{a, b}] = Measured{ns, now};
  return ns;
}

}  // namespace braid
