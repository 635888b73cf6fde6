// A counter in anonymous shared memory, made before a test forks its ranks: one rank counts what
// it has done and another waits for the count, so that the order between processes is certain
// where a fixed sleep would only make it likely. Needs nothing of braid (the API tests link only
// libnccl.so.2).
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <new>
#include <thread>

namespace braid::testing {

class SharedCounter {
 public:
  SharedCounter() {
    void* memory = mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    count_ = memory == MAP_FAILED ? nullptr : new (memory) std::atomic<int>(0);
  }
  ~SharedCounter() {
    if (count_ != nullptr) munmap(count_, sizeof(std::atomic<int>));
  }
  SharedCounter(const SharedCounter&) = delete;
  SharedCounter& operator=(const SharedCounter&) = delete;

  void add() {
    if (count_ != nullptr) count_->fetch_add(1, std::memory_order_acq_rel);
  }
  /// Waits until the count reaches `n`; false if it did not within `limit` (or there is no
  /// shared memory).
  bool waitFor(int n, std::chrono::milliseconds limit = std::chrono::seconds(60)) const {
    if (count_ == nullptr) return false;
    const auto by = std::chrono::steady_clock::now() + limit;
    while (count_->load(std::memory_order_acquire) < n) {
      if (std::chrono::steady_clock::now() >= by) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

 private:
  std::atomic<int>* count_ = nullptr;
};

}  // namespace braid::testing
