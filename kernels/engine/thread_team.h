// A block on the CPU as the emulated GPU runs it: several threads, each with a ThreadTeam of
// its own rank over one BlockState, so that the interpreter and the loops meet what a CUDA block
// gives them (team.h's BlockTeam): a leader that waits and publishes while the others wait at a
// barrier, values shared through one cell between two barriers, a vote, and every thread of the
// team striding through each slice. A team of one thread (SoloTeam) would never run those paths.
//
// The barrier counts arrivals under a mutex and sleeps on a condition variable: on a machine
// with fewer cores than emulated threads a spinning barrier would starve the threads it waits
// for. It is not fast and need not be: the emulation proves the protocol, not the speed.
#pragma once

#if defined(__CUDACC__)
#error "thread_team.h is the CPU's block; device code uses BlockTeam (team.h)"
#endif

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "kernels/engine/team.h"

namespace braid::kernels::engine {

/// What the threads of one emulated block share: the barrier, the cells share() and exchange()
/// pass values through, the flags any() votes in, and the stop word.
class BlockState {
 public:
  explicit BlockState(unsigned threads) : threads_(threads) {}
  BlockState(const BlockState&) = delete;
  BlockState& operator=(const BlockState&) = delete;

  unsigned threads() const { return threads_; }

  /// Returns once every thread of the block has called it (as often as this one).
  void barrier() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    if (++arrived_ == threads_) {
      arrived_ = 0;
      ++generation_;
      lock.unlock();
      passed_.notify_all();
      return;
    }
    passed_.wait(lock, [&] { return generation_ != generation; });
  }

  unsigned char* cell() { return cell_; }
  /// exchange()'s cells: the leader's value, then the sender's.
  unsigned char* pairCell(int which) { return pairCells_[which]; }
  std::atomic<uint32_t>& stop() { return stop_; }
  /// any()'s flags, two so that a round's votes never meet the next round's clearing. Atomic:
  /// several threads may vote at once (the barriers order the rest).
  std::atomic<bool>* votes() { return votes_; }

 private:
  const unsigned threads_;
  std::mutex mutex_;
  std::condition_variable passed_;
  unsigned arrived_ = 0;
  uint64_t generation_ = 0;
  alignas(16) unsigned char cell_[64] = {};
  alignas(16) unsigned char pairCells_[2][64] = {};
  std::atomic<uint32_t> stop_{0};
  std::atomic<bool> votes_[2] = {false, false};
};

/// One thread of an emulated block, as the interpreter sees it (team.h's interface).
class ThreadTeam {
 public:
  ThreadTeam(BlockState& block, unsigned rank) : block_(&block), rank_(rank) {}

  unsigned rank() const { return rank_; }
  unsigned size() const { return block_->threads(); }
  bool leader() const { return rank_ == 0; }
  unsigned sender() const { return senderOf(size()); }
  void sync() const { block_->barrier(); }

  /// The leader's `a` and the sender's `b` on every thread, as BlockTeam::exchange.
  template <typename A, typename B>
  void exchange(A& a, B& b) const {
    static_assert(sizeof(A) <= 64 && sizeof(B) <= 64, "exchange() passes small values");
    if (leader()) memcpy(block_->pairCell(0), &a, sizeof(A));
    if (rank_ == sender()) memcpy(block_->pairCell(1), &b, sizeof(B));
    sync();
    memcpy(&a, block_->pairCell(0), sizeof(A));
    memcpy(&b, block_->pairCell(1), sizeof(B));
    sync();
  }

  void raiseStop() const { block_->stop().store(1, std::memory_order_relaxed); }
  bool stopRaised() const { return block_->stop().load(std::memory_order_relaxed) != 0; }
  void clearStop() const { block_->stop().store(0, std::memory_order_relaxed); }

  /// The leader's `value` on every thread, as BlockTeam::share: through the cell, between two
  /// barriers so that no thread reads before the leader wrote or writes before all have read.
  template <typename T>
  T share(T value) const {
    static_assert(sizeof(T) <= 64, "share() passes small values");
    if (leader()) memcpy(block_->cell(), &value, sizeof(T));
    sync();
    T out;
    memcpy(&out, block_->cell(), sizeof(T));
    sync();
    return out;
  }

  /// Whether `b` holds on some thread, on every thread (__syncthreads_or). Round k votes in
  /// flag k % 2; the leader clears the other flag first, which every thread finished reading
  /// before the barrier that ended round k - 1.
  bool any(bool b) const {
    std::atomic<bool>* votes = block_->votes();
    const unsigned mine = round_ % 2;
    ++round_;
    if (leader()) votes[1 - mine].store(false, std::memory_order_relaxed);
    if (b) votes[mine].store(true, std::memory_order_relaxed);
    sync();
    const bool out = votes[mine].load(std::memory_order_relaxed);
    sync();
    return out;
  }

 private:
  BlockState* block_;
  unsigned rank_;
  mutable unsigned round_ = 0;
};

}  // namespace braid::kernels::engine
