// Slots of a FIFO that finish out of order, handed on in order.
//
// A FIFO whose slots travel over several connections (socket/socket_stripes.h) or queue pairs
// (ib/ib_fifo_pump.h) sees them land, or finish sending, in any order; the executor must see
// them in FIFO order. At most kFifoSlots are in flight, so a slot's index names it unambiguously.
#pragma once

#include <cstdint>

#include "base/futex.h"
#include "kernels/engine/fifo.h"

namespace braid::transport::net {

class SlotsInOrder {
 public:
  /// Slot `counter` is done; `word` is what a receiver publishes with it.
  void mark(uint32_t counter, uint32_t word = 0) {
    const uint32_t i = counter % kernels::engine::kFifoSlots;
    words_[i] = word;
    done_[i] = true;
  }
  bool marked(uint32_t counter) const { return done_[counter % kernels::engine::kFifoSlots]; }

  /// As the FIFO's sender: posts every marked slot in order from `cursor`, and wakes a receiver
  /// asleep on it. Whether any was posted.
  bool publish(const kernels::engine::FifoRef& fifo, kernels::engine::FifoCursor& cursor) {
    bool any = false;
    while (marked(cursor.mine)) {
      const uint32_t i = cursor.mine % kernels::engine::kFifoSlots;
      done_[i] = false;
      kernels::engine::postSlot(fifo, cursor, words_[i]);
      any = true;
    }
    if (any) futex::wakeIfWaiting(&fifo.counters->tail, &fifo.counters->recvWaiting);
    return any;
  }

  /// As the FIFO's receiver: releases every marked slot in order from `cursor`, and wakes a
  /// sender asleep on it. Whether any was released.
  bool release(const kernels::engine::FifoRef& fifo, kernels::engine::FifoCursor& cursor) {
    bool any = false;
    while (marked(cursor.mine)) {
      done_[cursor.mine % kernels::engine::kFifoSlots] = false;
      kernels::engine::releaseSlot(fifo, cursor);
      any = true;
    }
    if (any) futex::wakeIfWaiting(&fifo.counters->head, &fifo.counters->sendWaiting);
    return any;
  }

 private:
  uint32_t words_[kernels::engine::kFifoSlots] = {};
  bool done_[kernels::engine::kFifoSlots] = {};
};

}  // namespace braid::transport::net
