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
// A cell is one std::atomic<uint64_t> in the engine's format
// (kernels/engine/ll.h): flag high, data low; cell 0 the byte count, cells
// 1.. the payload; message `seq` in slot seq % kFifoSlots with the flag seq
// mod 2^flagBits.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernels/engine/ll.h"
#include "transport/connection.h"
#include "transport/shm/shm_magic.h"

namespace braid::transport::shm::ll {

inline constexpr uint64_t kMagic = kLlFifoMagic;
/// The Simple FIFO's magic, recognised only to say what went wrong.
inline constexpr uint64_t kSimpleMagic = kSimpleFifoMagic;
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kLine = 128;
inline constexpr size_t kPage = 4096;
inline constexpr size_t kCellData = kernels::engine::kLlCellData;  ///< payload bytes per cell
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

// The cell format, slot arithmetic and flags are the engine's (kernels/engine/ll.h), which
// the GPU's LL FIFOs run too.
using kernels::engine::cellsPerSlot;
using kernels::engine::dataOf;
using kernels::engine::flagOf;
using kernels::engine::FlagSpace;
using kernels::engine::makeCell;
using kernels::engine::payloadCells;
inline size_t strideFor(size_t slotBytes) { return kernels::engine::llStrideFor(slotBytes); }
inline size_t segmentBytes(size_t slotBytes) { return kPage + kFifoSlots * strideFor(slotBytes); }

/// The cells of the slot that message `seq` uses; `slots` is the mapping + kPage.
inline Cell* slotCells(void* slots, size_t stride, uint32_t seq) {
  return reinterpret_cast<Cell*>(kernels::engine::llSlotCells(slots, stride, seq));
}

}  // namespace braid::transport::shm::ll
