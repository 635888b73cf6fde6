// The two ends of a one-way FIFO between two ranks.
//
// A FIFO has kFifoSlots slots of slotBytes each. The sender fills the slot at
// `tail` and advances tail; the receiver reads the slot at `head` and advances
// head. The executor never knows which transport is underneath: it asks for
// the next slot, uses it, and posts or releases it.
#pragma once

#include <atomic>
#include <cassert>
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

  // Lending: an end whose proxy sends from memory it is shown (a socket end's proxy hands the
  // bytes to the kernel itself) may publish the slot from waitSlot as `bytes` of the caller's
  // memory instead of the slot's, and so spare the copy into the slot. The caller keeps that
  // memory alive and unchanged until the end gives it back: returned() has passed the lend's
  // number (waitReturned), or abandonLent() has cut the end off it.

  /// Whether postLent works on this end (ends that do not lend: false, and postLent must not be
  /// called).
  virtual bool lends() const { return false; }
  /// Publishes the slot from waitSlot as `bytes` (<= slotBytes) at `data`; returns the lend's
  /// number. Numbers count lends up from 0 over the end's life (wrapping at 2^32).
  virtual uint32_t postLent(const void* data, size_t bytes) {
    (void)data;
    (void)bytes;
    assert(false && "postLent() on an end that does not lend");
    return 0;
  }
  /// Waits until the lends up to number `upTo` (inclusive) have been given back; fails on the
  /// deadline or the abort flag, the lends then still out.
  virtual Status waitReturned(uint32_t upTo, const WaitContext& ctx) {
    (void)upTo;
    (void)ctx;
    return Status();
  }
  /// After a call failed: makes sure the end never reads lent memory again, at once, even at the
  /// price of its connection (the communicator is unusable after a failed call anyway).
  virtual void abandonLent() {}
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

  // Offers: an end whose proxy reads the bytes off the network itself (a socket end) may read
  // the next messages straight into the caller's memory, where the caller will want them, instead
  // of into slots; waitSlot then returns that place (the bytes already there) for each message
  // that landed in it. Messages the proxy read before the offer came stay in slots.

  /// Whether offer works on this end.
  virtual bool takesOffers() const { return false; }
  /// The next messages, `bytes` in all in slices of `sliceBytes` (the last one shorter), may land
  /// at `into` onwards. The memory must stay the caller's to write until withdrawOffer.
  virtual void offer(void* into, size_t sliceBytes, size_t bytes) {
    (void)into;
    (void)sliceBytes;
    (void)bytes;
    assert(false && "offer() on an end that takes no offers");
  }
  /// Ends the offer. Once its messages were all taken this only forgets it; before (a call that
  /// failed), it makes sure the proxy never writes there again, at once, even at the price of
  /// the end's connection.
  virtual void withdrawOffer() {}
};

}  // namespace braid::transport
