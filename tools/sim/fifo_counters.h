// What both simulators keep of a connection's FIFO, beside what each moves
// through it (symbolic values, or times): which slot comes next on each
// side, each slot's slice length, the two agents, and which of them waits.
#pragma once

#include <cstdint>

#include "transport/connection.h"

namespace braid::sim {

inline constexpr int kFifoSlots = transport::kFifoSlots;

struct FifoCounters {
  uint64_t sliceLen[kFifoSlots] = {};
  uint64_t posted = 0;    ///< slices the sender has put in, ever
  uint64_t released = 0;  ///< slices the receiver has taken out, ever
  int senderAgent = -1;
  int receiverAgent = -1;
  bool receiverWaiting = false;
  bool senderWaiting = false;

  uint64_t used() const { return posted - released; }
  /// Nothing for the receiver to take.
  bool empty() const { return used() == 0; }
  /// No slot for the sender to fill.
  bool full() const { return used() >= static_cast<uint64_t>(kFifoSlots); }
};

}  // namespace braid::sim
