// The agents that may be able to move, taken in rank order.
//
// Both simulators run an agent until it blocks and wake it when what it waits
// for arrives. Taking the woken agents in rank order, sweep after sweep,
// instead of last-woken first, lets a ring rank find several slices waiting
// from its predecessor (which ran just before it in the sweep) and move them
// in one visit, so each visit's cache misses are paid for several slices.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace braid::sim {

class ReadySet {
 public:
  void resize(size_t agents) {
    bits_.assign((agents + 63) / 64, 0);
    low_ = bits_.size();
  }
  void add(int agent) {
    low_ = std::min(low_, static_cast<size_t>(agent) >> 6);
    uint64_t& word = bits_[agent >> 6];
    const uint64_t bit = uint64_t(1) << (agent & 63);
    count_ += (word & bit) == 0;
    word |= bit;
  }
  bool empty() const { return count_ == 0; }
  /// Removes and returns the first agent at or after `from`, or -1.
  int takeFrom(int from) {
    const size_t fromWord = static_cast<size_t>(from) >> 6;
    for (size_t w = std::max(fromWord, low_); w < bits_.size(); ++w) {
      uint64_t word = bits_[w];
      if (w == fromWord) word &= ~uint64_t(0) << (from & 63);
      if (word == 0) {
        if (w == low_ && bits_[w] == 0) ++low_;  // nothing below the next word either
        continue;
      }
      const int bit = __builtin_ctzll(word);
      bits_[w] &= ~(uint64_t(1) << bit);
      --count_;
      return static_cast<int>(w * 64 + bit);
    }
    return -1;
  }

 private:
  std::vector<uint64_t> bits_;
  size_t count_ = 0;
  size_t low_ = 0;  // no word below this one has a bit set
};

}  // namespace braid::sim
