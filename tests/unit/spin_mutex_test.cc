// SpinMutex (base/spin_mutex.h): threads that take it in turn never overlap, whether the holder
// leaves at once or stays long enough that waiters give up spinning and yield.
#include "base/spin_mutex.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace braid {
namespace {

// Each thread adds to a plain counter under the lock, and notes whether it ever found another
// thread inside: a lock that let two in would lose increments or see the flag raised.
void hammer(int threads, int rounds, int holdLoops) {
  SpinMutex mutex;
  long counter = 0;
  bool inside = false;
  bool overlapped = false;
  std::vector<std::thread> team;
  for (int t = 0; t < threads; ++t) {
    team.emplace_back([&] {
      for (int i = 0; i < rounds; ++i) {
        std::lock_guard<SpinMutex> lock(mutex);
        if (inside) overlapped = true;
        inside = true;
        const long seen = counter;
        for (int k = 0; k < holdLoops; ++k) std::atomic_signal_fence(std::memory_order_seq_cst);
        counter = seen + 1;
        inside = false;
      }
    });
  }
  for (std::thread& t : team) t.join();
  EXPECT_EQ(counter, static_cast<long>(threads) * rounds);
  EXPECT_FALSE(overlapped);
}

TEST(SpinMutex, ShortHoldsNeverOverlap) { hammer(4, 20000, 0); }

TEST(SpinMutex, LongHoldsMakeWaitersYieldAndStillNeverOverlap) { hammer(3, 300, 20000); }

TEST(SpinMutex, TryLockFailsWhileHeld) {
  SpinMutex mutex;
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_FALSE(mutex.try_lock());
  mutex.unlock();
  EXPECT_TRUE(mutex.try_lock());
  mutex.unlock();
}

}  // namespace
}  // namespace braid
