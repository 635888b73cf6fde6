// The memory layout of an LL FIFO segment, shared by shm_ll_fifo.cc and the
// tests that check its invariants from a second mapping.
//
//   0      Header                                     one page
//            identity  magic "BRAIDLL1", version, slot count, slot size,
//                      stride, flag bits
//            head        receiver's counter of released messages
//            recvWaiting receiver's "I may be asleep" word
//            doorbell    bumped by the sender only when recvWaiting is set
//            sendWaiting sender's "I may be asleep" word
//   4096   slot 0 | slot 1 | ... | slot 7            each `stride` bytes:
//                                                    the cells, rounded up to 128
//
// A cell is one std::atomic<uint64_t>: flag in the high 32 bits, data in the
// low 32. Cell 0 of a slot carries the message's byte count, cells 1.. its
// payload, 4 bytes each (the last one padded). Message `seq` (the sender's
// count of posts, wrapping at 2^32) goes to slot seq % kFifoSlots with the
// flag seq mod 2^flagBits in every cell it writes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "transport/connection.h"
#include "transport/shm/shm_magic.h"

namespace braid::transport::shm::ll {

inline constexpr uint64_t kMagic = kLlFifoMagic;
/// The Simple FIFO's magic, recognised only to say what went wrong.
inline constexpr uint64_t kSimpleMagic = kSimpleFifoMagic;
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kLine = 128;
inline constexpr size_t kPage = 4096;
inline constexpr size_t kCellData = 4;  ///< payload bytes per cell
/// 2^(flagBits-1) must reach kFifoSlots for the whole-slot rewrites to work.
inline constexpr int kMinFlagBits = 4;
inline constexpr int kMaxFlagBits = 32;

using Cell = std::atomic<uint64_t>;
static_assert(sizeof(Cell) == 8 && Cell::is_always_lock_free,
              "an LL cell must be one plain 64-bit word that both processes store and load");

struct Header {
  // Identity: written by the receiver, which publishes `magic` last.
  std::atomic<uint64_t> magic;
  uint32_t version;
  uint32_t slotCount;
  uint64_t slotBytes;
  uint64_t stride;
  uint32_t flagBits;
  // Written by the receiver on every release.
  alignas(kLine) std::atomic<uint32_t> head;
  alignas(kLine) std::atomic<uint32_t> recvWaiting;
  alignas(kLine) std::atomic<uint32_t> doorbell;
  alignas(kLine) std::atomic<uint32_t> sendWaiting;
};
static_assert(sizeof(Header) <= kPage, "the LL FIFO header must fit its page");

inline size_t payloadCells(size_t bytes) { return (bytes + kCellData - 1) / kCellData; }
inline size_t cellsPerSlot(size_t slotBytes) { return 1 + payloadCells(slotBytes); }
inline size_t strideFor(size_t slotBytes) {
  return (cellsPerSlot(slotBytes) * sizeof(Cell) + kLine - 1) / kLine * kLine;
}
inline size_t segmentBytes(size_t slotBytes) { return kPage + kFifoSlots * strideFor(slotBytes); }

inline uint64_t makeCell(uint32_t flag, uint32_t data) { return uint64_t{flag} << 32 | data; }
inline uint32_t flagOf(uint64_t cell) { return static_cast<uint32_t>(cell >> 32); }
inline uint32_t dataOf(uint64_t cell) { return static_cast<uint32_t>(cell); }

/// The cells of the slot that message `seq` uses; `slots` is the mapping + kPage.
inline Cell* slotCells(void* slots, size_t stride, uint32_t seq) {
  return reinterpret_cast<Cell*>(static_cast<char*>(slots) + (seq % kFifoSlots) * stride);
}

/// The flags of message sequence numbers, modulo 2^bits.
class FlagSpace {
 public:
  explicit FlagSpace(uint32_t bits)
      : mask_(bits >= 32 ? UINT32_MAX : (1u << bits) - 1), halfMask_(mask_ >> 1) {}
  uint32_t flag(uint32_t seq) const { return seq & mask_; }
  /// Whether message `seq` rewrites every cell of its slot, padding included:
  /// one message in each slot every 2^(bits-1) (see shm_ll_fifo.cc).
  bool rewritesWholeSlot(uint32_t seq) const {
    return (seq & halfMask_) < static_cast<uint32_t>(kFifoSlots);
  }

 private:
  uint32_t mask_;
  uint32_t halfMask_;
};

}  // namespace braid::transport::shm::ll
