// The LL (low-latency) protocol's cells, written once for the shm LL FIFO
// (transport/shm/shm_ll_fifo.cc) and the GPU's (device_env.h).
//
// A slot is a row of 8-byte cells: flag in the high 32 bits, data in the
// low 32, written by one 64-bit store, so a reader that sees the expected
// flag in a cell has that cell's data: no counter to publish, no fence.
// Cell 0 carries the message's size word (the byte count; on the GPU with
// kLastSlice on a message's last slice), cells 1.. its payload, 4 bytes
// each (the last padded). Message `seq` (the sender's count of posts,
// wrapping at 2^32) goes to slot seq % kFifoSlots with the flag seq modulo
// 2^flagBits in every cell it writes.
//
// Why old cells never look new: while a receiver waits for message s, a
// cell of its slot that s has not written yet holds the flag of an earlier
// message s' of that slot. The sender rewrites every cell of a slot
// (padding past the payload) once every 2^(flagBits-1) messages, on the
// messages whose sequence modulo 2^(flagBits-1) is below kFifoSlots, and
// the creator fills every cell as if the round just before the first
// message had done the same (fillAsPreviousRound). So 0 < s - s' <=
// 2^(flagBits-1) < 2^flagBits, and the two flags differ.
//
// Flow control is the Simple protocol's: the receiver publishes its count
// of released messages (head) and the sender keeps the last value it read.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/engine/fifo.h"
#include "kernels/host_device.h"

namespace braid::kernels::engine {

inline constexpr size_t kLlCellData = 4;  ///< payload bytes per cell

BRAID_HOST_DEVICE uint64_t makeCell(uint32_t flag, uint32_t data) {
  return uint64_t{flag} << 32 | data;
}
BRAID_HOST_DEVICE uint32_t flagOf(uint64_t cell) { return static_cast<uint32_t>(cell >> 32); }
BRAID_HOST_DEVICE uint32_t dataOf(uint64_t cell) { return static_cast<uint32_t>(cell); }

BRAID_HOST_DEVICE size_t payloadCells(size_t bytes) {
  return (bytes + kLlCellData - 1) / kLlCellData;
}
BRAID_HOST_DEVICE size_t cellsPerSlot(size_t slotBytes) { return 1 + payloadCells(slotBytes); }
/// Bytes between LL slots: the cells, rounded up to 128.
BRAID_HOST_DEVICE size_t llStrideFor(size_t slotBytes) {
  return (cellsPerSlot(slotBytes) * sizeof(uint64_t) + kFifoLine - 1) / kFifoLine * kFifoLine;
}

/// The cells of the slot message `seq` uses.
BRAID_HOST_DEVICE uint64_t* llSlotCells(void* slots, size_t stride, uint32_t seq) {
  return reinterpret_cast<uint64_t*>(static_cast<char*>(slots) +
                                     static_cast<size_t>(seq % kFifoSlots) * stride);
}

/// The flags of message sequence numbers, modulo 2^bits.
class FlagSpace {
 public:
  BRAID_HOST_DEVICE explicit FlagSpace(uint32_t bits)
      : mask_(bits >= 32 ? 0xffffffffu : (1u << bits) - 1), halfMask_(mask_ >> 1) {}
  BRAID_HOST_DEVICE uint32_t flag(uint32_t seq) const { return seq & mask_; }
  /// Whether message `seq` rewrites every cell of its slot, padding included.
  BRAID_HOST_DEVICE bool rewritesWholeSlot(uint32_t seq) const {
    return (seq & halfMask_) < kFifoSlots;
  }

 private:
  uint32_t mask_;
  uint32_t halfMask_;
};

/// Fills `cells` (kFifoSlots slots of `stride` bytes, in host memory) as
/// messages first - kFifoSlots .. first - 1 would have had they rewritten
/// their whole slots: the base case of the argument above.
inline void fillAsPreviousRound(void* cells, size_t slotBytes, size_t stride,
                                const FlagSpace& flags, uint32_t first) {
  for (uint32_t k = 0; k < kFifoSlots; ++k) {
    const uint32_t seq = first - kFifoSlots + k;
    uint64_t* slot = llSlotCells(cells, stride, seq);
    for (size_t i = 0; i < cellsPerSlot(slotBytes); ++i) slot[i] = makeCell(flags.flag(seq), 0);
  }
}

}  // namespace braid::kernels::engine
