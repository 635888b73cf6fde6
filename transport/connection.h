// The two ends of a one-way FIFO between two ranks.
//
// A FIFO has kFifoSlots slots of slotBytes each. The sender fills the slot at
// `tail` and advances tail; the receiver reads the slot at `head` and advances
// head. The executor never knows which transport is underneath: it asks for
// the next slot, uses it, and posts or releases it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "base/deadline.h"
#include "braid/status.h"
#include "kernels/engine/fifo.h"

namespace braid::transport {

/// The engine's slot count (kernels/engine/fifo.h): every transport's FIFOs have it.
inline constexpr int kFifoSlots = static_cast<int>(kernels::engine::kFifoSlots);

/// What a blocking wait needs to give up: the deadline and the comm's abort flag.
struct WaitContext {
  Deadline deadline;
  const std::atomic<bool>* abort = nullptr;
  int peer = -1;  ///< for the error message
  /// How long to poll before blocking in the kernel, in nanoseconds. A time,
  /// not a count of polls, because one CPU pause lasts 10 to 140 cycles
  /// depending on the CPU. Small when ranks outnumber cores, where spinning
  /// only steals the core the peer needs.
  uint32_t spinNs = 20000;
};

class SendEnd {
 public:
  virtual ~SendEnd() = default;
  virtual size_t slotBytes() const = 0;
  /// Blocks until the slot at tail is free; returns its address.
  virtual Result<void*> waitSlot(const WaitContext& ctx) = 0;
  /// The slot at tail if it is free now, else nullptr; never blocks. For
  /// executors that advance several connections at once.
  virtual void* trySlot() = 0;
  /// Publishes `bytes` (<= slotBytes) written to the slot from waitSlot.
  virtual void post(size_t bytes) = 0;
};

class RecvEnd {
 public:
  virtual ~RecvEnd() = default;
  virtual size_t slotBytes() const = 0;
  /// Blocks until the slot at head is full; returns its address and size.
  virtual Result<const void*> waitSlot(const WaitContext& ctx, size_t* bytes) = 0;
  /// The slot at head and its size if it is full now, else nullptr; never blocks.
  virtual const void* trySlot(size_t* bytes) = 0;
  /// Hands the slot from waitSlot back to the sender.
  virtual void release() = 0;
};

}  // namespace braid::transport
