// The FIFO protocol between two ranks, written once for every place that
// runs it: the shm transport's ends on the CPU (transport/shm/shm_fifo.cc),
// the emulated GPU, and the CUDA kernel, whose FIFOs live in a GPU's memory
// or in pinned host memory (transport/cuda_ipc/).
//
// A FIFO has kFifoSlots slots. Its counters live with the receiver:
//
//   tail      sender's count of posted slots; bytes[i] beside it holds what
//             the slot posted at index i carries (the byte count, with
//             kLastSlice set on a message's last slice)
//   head      receiver's count of released slots
//   recvWaiting / sendWaiting  a CPU waiter's "I may be asleep" words
//             (base/futex.h); the GPU never sleeps and leaves them 0
//
// Both counters only grow and wrap at 2^32, so the fill level is tail - head
// (0..kFifoSlots) and slot k lives at index k % kFifoSlots. Each is written
// by one side only and sits on its own 128-byte line, so a poll reads one
// line. Each end keeps a private cursor: its own counter and the last value
// it saw of the other's, so with several slots in flight it reads the peer's
// line only when its copy says it must wait.
//
//   sender:   room?  tail - seenHead < kFifoSlots (else reload head, acquire)
//             write the slot, then bytes (relaxed), then tail (publish)
//   receiver: data?  seenTail != head (else reload tail, acquire)
//             read bytes (relaxed) and the slot, then head (no fence on the GPU)
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/engine/sync.h"
#include "kernels/host_device.h"

namespace braid::kernels::engine {

inline constexpr uint32_t kFifoSlots = 8;
/// Set in a slot's byte count on the last slice of a message, so a receiver
/// expecting a message of another length finds out at once.
inline constexpr uint32_t kLastSlice = 0x80000000u;
inline constexpr size_t kFifoLine = 128;

struct FifoCounters {
  alignas(kFifoLine) uint32_t tail;
  uint32_t bytes[kFifoSlots];
  alignas(kFifoLine) uint32_t head;
  alignas(kFifoLine) uint32_t recvWaiting;
  alignas(kFifoLine) uint32_t sendWaiting;
};

/// One FIFO as both ends address it in their own address space.
struct FifoRef {
  FifoCounters* counters;
  char* slots;      ///< slot i at slots + i * stride
  uint64_t stride;  ///< bytes between slots (at least slotBytes)
  uint32_t slotBytes;
};

/// An end's private view: its own counter and the last value it read of the peer's.
struct FifoCursor {
  uint32_t mine;
  uint32_t seen;
};

/// A sender's cursor as the counters stand (no slot of its in flight).
BRAID_HOST_DEVICE FifoCursor senderCursor(const FifoCounters* c) {
  return {loadRelaxed(&c->tail), loadAcquire(&c->head)};
}

/// A receiver's cursor as the counters stand.
BRAID_HOST_DEVICE FifoCursor receiverCursor(const FifoCounters* c) {
  const uint32_t head = loadRelaxed(&c->head);
  return {head, head};
}

BRAID_HOST_DEVICE bool fifoFull(const FifoCursor& s) { return s.mine - s.seen >= kFifoSlots; }

/// Whether the slot at the sender's tail is free, reading the receiver's
/// head only when the cursor says the FIFO is full.
BRAID_HOST_DEVICE bool sendRoom(const FifoRef& f, FifoCursor& s) {
  if (!fifoFull(s)) return true;
  s.seen = loadAcquire(&f.counters->head);
  return !fifoFull(s);
}

/// Whether the slot at the receiver's head holds a posted slice.
BRAID_HOST_DEVICE bool recvData(const FifoRef& f, FifoCursor& r) {
  if (r.seen != r.mine) return true;
  r.seen = loadAcquire(&f.counters->tail);
  return r.seen != r.mine;
}

BRAID_HOST_DEVICE char* slotAt(const FifoRef& f, uint32_t counter) {
  return f.slots + static_cast<uint64_t>(counter % kFifoSlots) * f.stride;
}

/// The byte count word of the slot at the receiver's head (with kLastSlice).
BRAID_HOST_DEVICE uint32_t postedWord(const FifoRef& f, const FifoCursor& r) {
  return loadRelaxed(&f.counters->bytes[r.mine % kFifoSlots]);
}

/// Publishes the slot at the sender's tail; `word` is its byte count, with
/// kLastSlice on a message's last slice.
BRAID_HOST_DEVICE void postSlot(const FifoRef& f, FifoCursor& s, uint32_t word) {
  storeRelaxed(&f.counters->bytes[s.mine % kFifoSlots], word);
  ++s.mine;
  storePublish(&f.counters->tail, s.mine);
}

/// Hands the slot at the receiver's head back to the sender, once the slot is read (on the GPU:
/// after the block's barrier), without a fence on the GPU (sync.h storeAfterReads).
BRAID_HOST_DEVICE void releaseSlot(const FifoRef& f, FifoCursor& r) {
  ++r.mine;
  storeAfterReads(&f.counters->head, r.mine);
}

}  // namespace braid::kernels::engine
