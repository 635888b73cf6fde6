// A test barrier for ranks that are threads of one process or processes forked after it is
// made: the bootstrap barrier's stand-in where a test makes ranks' shared state itself.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <thread>

#include "base/deadline.h"
#include "braid/status.h"

namespace braid::testing {

// A barrier in anonymous shared memory: the same object serves threads and
// the processes forked after it is made. A rank that never arrives makes
// the others fail after the timeout instead of hanging the test.
class SharedBarrier {
 public:
  explicit SharedBarrier(int nranks) : nranks_(static_cast<uint32_t>(nranks)) {
    void* memory =
        mmap(nullptr, sizeof(State), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    state_ = memory == MAP_FAILED ? nullptr : new (memory) State();
  }
  ~SharedBarrier() {
    if (state_ != nullptr) munmap(state_, sizeof(State));
  }
  SharedBarrier(const SharedBarrier&) = delete;
  SharedBarrier& operator=(const SharedBarrier&) = delete;

  Status wait() {
    if (state_ == nullptr) return systemError("the test barrier's mmap failed");
    const uint32_t generation = state_->generation.load(std::memory_order_acquire);
    if (state_->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == nranks_) {
      state_->arrived.store(0, std::memory_order_relaxed);
      state_->generation.fetch_add(1, std::memory_order_release);
      return Status();
    }
    const Deadline deadline = Deadline::afterMs(20000);
    while (state_->generation.load(std::memory_order_acquire) == generation) {
      if (deadline.expired()) return remoteError("test barrier: a rank never arrived");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return Status();
  }

 private:
  struct State {
    std::atomic<uint32_t> arrived{0};
    std::atomic<uint32_t> generation{0};
  };
  uint32_t nranks_;
  State* state_ = nullptr;
};

}  // namespace braid::testing
