// The one-shot all-reduce on a GPU, real or emulated: one block runs a
// call, the same code in the CUDA kernel and on the emulated GPU. (The host
// communicators' one-shot is exec/one_shot.cc, over shm.)
//
// Every rank publishes pre(its input) on its board in LL cells (ll.h: flag
// and data in one 8-byte store), then reads every peer's board through CUDA
// IPC and folds the N operands itself, in the in-order binary tree's order
// (algo::foldInOrder), the same order on every rank: all ranks get the same
// bits, and the tree's bits in deterministic mode. One step instead of a
// ring's 2(N-1), at the price of reading N-1 inputs: for tiny messages.
//
// Terms:
//
//   call        the k-th one-shot all-reduce of the communicator, counted
//               on the device (OneShotState::calls), so that a launch a CUDA
//               graph replays counts too
//   parity      k % 2: a board has two slots and call k publishes in slot
//               k % 2, so a rank may publish call k+1 while slow peers still
//               read call k
//   generation  k / 2, the g-th call of its parity: its cells carry the flag
//               g % flagPeriod + 1, never 0 (a board starts zeroed)
//
// Why two slots are enough (exec/one_shot.cc argues it for the host board):
// a rank publishes call k+2 only after it has read every peer's call k+1,
// which each peer published only after reading call k. On the GPU "after"
// is the peer's barrier and system fence between its last read of call k
// and its first store of call k+1 (start of runOneShot).
//
// A slot keeps, past the cells of its last call, cells of older calls of its
// parity. A reader of generation g polls for flag g % P + 1, which cells of
// generation g - P carried too; so before a rank publishes generation g it
// zeroes its slot if the slot may still hold cells of generation g + 1 - P
// (it was last zeroed at or before that generation), fencing between the
// zeroes and the new cells. With P = 2^32 - 1 that happens once in 2^33
// calls; tests make P small.
//
// After its fold a rank acknowledges each peer's call in the peer's board
// (acks: one 8-byte word per reader after the two slots), so that a rank
// that leaves frees its board only once every peer has read its last call
// (exec/device_one_shot.cc waits for the acks), not under a slow reader.
//
// A slot's cell 0 carries the call's size word (sliceWord of its bytes),
// cells 1.. pre(input): a rank that called with another count than its peer
// finds out from the size word (kSliceMismatch) instead of reading a part of
// the peer's input or waiting for cells that never come.
//
// The fold is a postfix program the host derives from foldInOrder
// (OneShotBoard::fold): a rank pushes that rank's operand, kFoldCombine
// replaces the two top operands a, b with op(a, b). The stack's entries are
// arrays of the call's size in the rank's own scratch memory; a peer's
// operand is unpacked from its cells into its entry, the rank's own copied.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/engine/device_waits.h"
#include "kernels/engine/interpreter.h"
#include "kernels/engine/launch.h"
#include "kernels/engine/ll.h"
#include "kernels/engine/sync.h"
#include "kernels/host_device.h"

namespace braid::kernels::engine {

/// Most ranks of a communicator that runs the one-shot on GPUs.
inline constexpr uint32_t kMaxOneShotRanks = 32;
/// Deepest fold stack: the in-order tree of 32 ranks has depth 5, and a
/// postfix evaluation holds at most depth + 2 operands.
inline constexpr uint32_t kMaxFoldDepth = 8;
/// In OneShotBoard::fold: combine the two top operands.
inline constexpr int16_t kFoldCombine = -1;

/// What a rank keeps of its one-shot calls, in its own device memory.
struct OneShotState {
  uint64_t calls;        ///< one-shot calls made so far
  uint64_t zeroedAt[2];  ///< per parity, the generation at which the slot was last zeroed
};

/// One rank's view of the boards, in its device memory (made once by
/// exec/device_one_shot.cc).
struct OneShotBoard {
  /// Rank r's board in this process's address space: slot p at cells[r] + p * slotCells,
  /// its size word first; then its acks, one word per rank (oneShotAcks).
  uint64_t* cells[kMaxOneShotRanks];
  OneShotState* state;
  /// kMaxFoldDepth + 1 arrays of maxBytes: the own operand, then the stack.
  char* scratch;
  uint64_t slotCells;
  uint64_t maxBytes;  ///< largest call in bytes; a multiple of the pack size
  uint32_t nranks;
  uint32_t rank;
  uint32_t flagPeriod;  ///< at least 2
  uint32_t nfold;
  int16_t fold[2 * kMaxOneShotRanks];
};

/// Rank r's acknowledgements: word q is the calls of r that rank q has read.
BRAID_HOST_DEVICE uint64_t* oneShotAcks(const OneShotBoard& b, uint32_t r) {
  return b.cells[r] + 2 * b.slotCells;
}

/// Runs one-shot call `call` (its element count in sliceElems) on `team`.
template <typename Team, typename Loops>
BRAID_HOST_DEVICE Fault runOneShot(const Team& team, const Loops& loops, const EngineArgs& args,
                                   const EngineCall& call) {
  const OneShotBoard& b = *call.oneShot;
  const size_t count = call.sliceElems;
  const size_t bytes = count * call.elemBytes;
  if (bytes > b.maxBytes || b.nranks > kMaxOneShotRanks || b.flagPeriod < 2) {
    return {FaultCode::kBadCall, -1, bytes, b.maxBytes};
  }
  // The reads of the previous call come before this call's stores (above).
  team.sync();
  if (team.leader()) fenceSystem();
  const uint64_t k = team.share(team.leader() ? b.state->calls : 0);
  const uint32_t parity = static_cast<uint32_t>(k & 1);
  const uint64_t g = k >> 1;
  const uint32_t flag = static_cast<uint32_t>(g % b.flagPeriod) + 1;
  const size_t cells = payloadCells(bytes);
  uint64_t* mySlot = b.cells[b.rank] + parity * b.slotCells;
  if (g + 1 >= b.flagPeriod + b.state->zeroedAt[parity]) {
    for (size_t i = team.rank(); i < b.slotCells; i += team.size()) storeRelaxed(mySlot + i, 0);
    fenceSystem();
    team.sync();
    if (team.leader()) b.state->zeroedAt[parity] = g;
  }
  char* own = b.scratch;
  loops.load(own, call.input, count);
  team.sync();
  packLlCells(team, mySlot + 1, cells, cells, flag, reinterpret_cast<const uint32_t*>(own));
  if (team.leader()) storeRelaxed(mySlot, makeCell(flag, sliceWord(bytes, true)));

  char* stack[kMaxFoldDepth];
  uint32_t depth = 0;
  for (uint32_t i = 0; i < b.nfold; ++i) {
    const int16_t f = b.fold[i];
    if (f == kFoldCombine) {
      if (depth < 2) return {FaultCode::kBadCall, -1, i, depth};
      --depth;
      loops.combine(stack[depth - 1], stack[depth - 1], stack[depth], count);
    } else {
      if (depth == kMaxFoldDepth) return {FaultCode::kBadCall, -1, i, depth};
      char* entry = b.scratch + (depth + 1) * b.maxBytes;
      if (static_cast<uint32_t>(f) == b.rank) {
        loops.copy(entry, own, bytes);
      } else {
        const uint64_t* slot = b.cells[f] + parity * b.slotCells;
        Fault fault = noFault();
        if (team.leader()) {
          uint64_t size = 0;
          fault = waitUntil(
              args, [&] { return flagOf(size = loadRelaxed(slot)) == flag; }, f);
          if (!failed(fault)) fault = checkSlice(dataOf(size), bytes, true, true, f);
        }
        fault = team.share(fault);
        if (!failed(fault)) {
          fault = unpackLlCells(team, args, slot + 1, cells, flag,
                                reinterpret_cast<uint32_t*>(entry), f);
        }
        if (failed(fault)) return fault;
      }
      stack[depth++] = entry;
    }
    team.sync();
  }
  if (depth != 1) return {FaultCode::kBadCall, -1, b.nfold, depth};
  // Every peer's cells are read (the barrier after the last unpack).
  if (team.leader()) {
    fenceSystem();
    for (uint32_t r = 0; r < b.nranks; ++r) {
      if (r != b.rank) storeRelaxed(oneShotAcks(b, r) + b.rank, k + 1);
    }
  }
  loops.copy(call.output, stack[0], bytes);
  team.sync();
  loops.finish(call.output, count);
  team.sync();
  if (team.leader()) b.state->calls = k + 1;
  return noFault();
}

}  // namespace braid::kernels::engine
