// The symmetric kernels: all_reduce, all_gather and reduce_scatter whose buffers lie in
// symmetric windows (include/nccl_device/window_layout.h), so that every rank of the host has
// every peer's buffer mapped and loads or stores it directly, with no FIFO between them. The same
// code runs in the CUDA kernel and on the emulated GPU (engine_block.h runs it for a call whose
// kind is kSymmetric).
//
// Terms:
//
//   window      a rank's ncclWindow_vidmem: lsaBases[q] is where rank q's buffer of the window
//               is mapped in this rank's address space. As NCCL's symmetric kernels do, a call
//               takes its peers' buffers at the offset of its own in its window: every rank
//               passes buffers at the same offset of windows registered together (an in-place
//               all_gather's input is the rank's block of that output, at an offset of its own).
//   block       the call runs on nchannels blocks; block b of every rank takes the b-th piece
//               of whatever the rank's part of the call is, and meets only block b of its peers
//   barrier     block b's meeting of the ranks: each rank stores its count of block-b barriers
//               passed (its epoch, counted on the device in SymmetricState, never reset) into
//               its word of every peer's barrier area, then waits until every peer's word in
//               its own area has reached it. Counts only grow, so a rank already at the next
//               barrier satisfies the one before too.
//
// Every call is: barrier (every peer's input is ready, and every peer has finished the call
// before, so its output may be written), the phase of its kind, barrier (nobody leaves while a
// peer still reads its input or stores into its output). Kinds:
//
//   all_reduce one-shot  each rank loads every peer's input at each element of the call, folds
//                        them from rank 0 up and writes its own output. Out of place only: in
//                        place, a rank's output is its input, which the peers are still reading.
//   all_reduce two-shot  the elements are cut into one share per rank; each rank loads every
//                        peer's input at its share, folds from rank 0 up, and stores the result
//                        into every peer's output. In place is safe: an element is read and
//                        written by its share's owner alone, read first. Each rank stores the
//                        results rather than each gathering them (a third barrier between the
//                        reduce and the gather): stores are posted, the only wait is the barrier.
//   reduce_scatter       rank r loads block r of every peer's input, folds from rank 0 up and
//                        writes its output (in place: its own input's block r, read only by it).
//   all_gather           each rank loads every peer's input and copies it into its own output at
//                        the peer's block (in place, its own block is already there).
//
// Every rank folds in the same order, rank 0 first, so all ranks get the same bits and a
// reference that folds in that order matches them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/engine/device_waits.h"
#include "kernels/engine/interpreter.h"
#include "kernels/engine/launch.h"
#include "kernels/engine/one_shot.h"
#include "kernels/engine/sync.h"
#include "kernels/host_device.h"
#include "nccl_device/window_layout.h"

namespace braid::kernels::engine {

/// Most ranks of a symmetric call (the ranks of one host).
inline constexpr uint32_t kMaxSymmetricRanks = 32;
/// Most blocks of a symmetric call: the barrier areas have a row per block.
inline constexpr uint32_t kMaxSymmetricBlocks = 32;
/// Bytes of a rank's barrier area: a word per (block, writer).
inline constexpr size_t kSymmetricBarrierBytes =
    kMaxSymmetricBlocks * kMaxSymmetricRanks * sizeof(uint32_t);
/// Pieces of a call are cut at multiples of this many bytes.
inline constexpr size_t kSymmetricGrainBytes = 16;

enum class SymmetricKind : uint32_t {
  kAllReduceOneShot = 0,
  kAllReduceTwoShot = 1,
  kReduceScatter = 2,
  kAllGather = 3,
};

/// What a rank keeps of its symmetric calls, in its own device memory.
struct SymmetricState {
  uint32_t epoch[kMaxSymmetricBlocks];  ///< barriers block b has passed
};

/// One rank's view of the barrier areas, in its device memory (exec/device_symmetric.cc).
struct SymmetricBoard {
  /// Rank q's barrier area in this process's address space: word (b * kMaxSymmetricRanks + w)
  /// is writer w's epoch of block b.
  uint32_t* barriers[kMaxSymmetricRanks];
  SymmetricState* state;
  uint32_t nranks;
  uint32_t rank;
};

/// What a symmetric EngineCall points to, in device memory: the board, the call's two windows
/// (this rank's, as ncclCommWindowRegister gave them) and its kind.
struct SymmetricCall {
  const SymmetricBoard* board;
  const ncclWindow_vidmem* send;
  const ncclWindow_vidmem* recv;
  SymmetricKind kind;
  uint32_t reserved;
};

/// [begin, end) of a call's elements.
struct ElemRange {
  size_t begin;
  size_t end;
};

/// Piece i of `pieces` of [r.begin, r.end), cut at multiples of `grain` elements from r.begin.
BRAID_HOST_DEVICE ElemRange pieceOf(ElemRange r, size_t pieces, size_t i, size_t grain) {
  const size_t n = r.end - r.begin;
  size_t per = (n + pieces - 1) / pieces;
  per = (per + grain - 1) / grain * grain;
  const size_t b = i * per < n ? i * per : n;
  const size_t e = b + per < n ? b + per : n;
  return {r.begin + b, r.begin + e};
}

/// Block `blk`'s barrier with the peers' blocks blk: the fault names the lowest peer missing.
template <typename Team>
BRAID_HOST_DEVICE Fault symmetricBarrier(const Team& team, const EngineArgs& args,
                                         const SymmetricBoard& b, uint32_t blk) {
  team.sync();
  Fault f = noFault();
  if (team.leader()) {
    const uint32_t epoch = b.state->epoch[blk] + 1;
    b.state->epoch[blk] = epoch;
    // What this rank's block did before (loads of inputs, stores into outputs) comes before
    // its word, for every peer that acquires the word: a release per peer (storePublish).
    const size_t row = static_cast<size_t>(blk) * kMaxSymmetricRanks;
    for (uint32_t j = 1; j < b.nranks; ++j) {
      const uint32_t q = (b.rank + j) % b.nranks;
      storePublish(b.barriers[q] + row + b.rank, epoch);
    }
    const uint32_t all = b.nranks >= 32 ? 0xffffffffu : (1u << b.nranks) - 1;
    uint32_t missing = all & ~(1u << b.rank);
    f = waitUntil(
        args,
        [&] {
          for (uint32_t w = 0; w < b.nranks; ++w) {
            if ((missing >> w & 1u) == 0) continue;
            const uint32_t seen = loadAcquire(b.barriers[b.rank] + row + w);
            if (static_cast<int32_t>(seen - epoch) >= 0) missing &= ~(1u << w);
          }
          return missing == 0;
        },
        lowestRank(missing));
    if (failed(f)) f.peer = lowestRank(missing);
  }
  return team.share(f);
}

/// The offset of `own` (this rank's buffer) in its window `w`.
BRAID_HOST_DEVICE size_t offsetIn(const ncclWindow_vidmem& w, const void* own) {
  return static_cast<size_t>(static_cast<const char*>(own) - w.localBase);
}

/// Rank q's buffer at `offset` of window `w`.
template <typename T>
BRAID_HOST_DEVICE T* peerBuffer(const ncclWindow_vidmem& w, uint32_t q, size_t offset) {
  return reinterpret_cast<T*>(w.lsaBases[q] + offset);
}

/// Folds element `inAt + i` of every rank's input (rank 0 first) for i in `r`, and writes
/// post of it at `outAt + i` of this rank's output, or of every rank's (ToAll).
template <typename T, typename Pre, typename F, typename Post, bool ToAll, typename Team>
BRAID_HOST_DEVICE void foldFromPeers(const Team& team, const OpArgs& op, const SymmetricCall& s,
                                     const EngineCall& call, ElemRange r, size_t inAt,
                                     size_t outAt) {
  const uint32_t n = s.board->nranks;
  const uint32_t rank = s.board->rank;
  const size_t inOffset = offsetIn(*s.send, call.input) + inAt * sizeof(T);
  const size_t outOffset = offsetIn(*s.recv, call.output) + outAt * sizeof(T);
  const Pre pre(op);
  const Post post(op);
  for (size_t i = r.begin + team.rank(); i < r.end; i += team.size()) {
    T acc = pre(peerBuffer<const T>(*s.send, 0, inOffset)[i]);
    for (uint32_t q = 1; q < n; ++q) {
      acc = F()(acc, pre(peerBuffer<const T>(*s.send, q, inOffset)[i]));
    }
    const T y = post(acc);
    if constexpr (ToAll) {
      for (uint32_t j = 0; j < n; ++j) {
        const uint32_t q = rank + j < n ? rank + j : rank + j - n;
        peerBuffer<T>(*s.recv, q, outOffset)[i] = y;
      }
    } else {
      static_cast<T*>(call.output)[outAt + i] = y;
    }
  }
}

/// Copies bytes [r.begin, r.end) of `from` to `to`, in 8-byte words where both allow.
template <typename Team>
BRAID_HOST_DEVICE void copyPiece(const Team& team, char* to, const char* from, ElemRange r) {
  size_t at = r.begin;
  if (((reinterpret_cast<uintptr_t>(to) | reinterpret_cast<uintptr_t>(from) | at) & 7) == 0) {
    const size_t words = (r.end - at) / 8;
    for (size_t i = team.rank(); i < words; i += team.size()) {
      reinterpret_cast<uint64_t*>(to + at)[i] = reinterpret_cast<const uint64_t*>(from + at)[i];
    }
    at += words * 8;
  }
  for (size_t i = at + team.rank(); i < r.end; i += team.size()) to[i] = from[i];
}

/// Block `blk`'s part of an all_gather of sliceElems elements of elemBytes per rank.
template <typename Team>
BRAID_HOST_DEVICE void gatherPiece(const Team& team, const SymmetricCall& s, const EngineCall& call,
                                   uint32_t blk) {
  const size_t bytes = call.sliceElems * call.elemBytes;
  const ElemRange piece = pieceOf({0, bytes}, call.nchannels, blk, kSymmetricGrainBytes);
  char* const out = static_cast<char*>(call.output);
  // In place each rank's input is its own block of its output, at another offset on each rank:
  // peer q's input is then block q of q's output.
  const bool inPlace = static_cast<const char*>(call.input) == out + s.board->rank * bytes;
  for (uint32_t j = 0; j < s.board->nranks; ++j) {
    const uint32_t q = (s.board->rank + j) % s.board->nranks;
    const char* from = inPlace
                           ? peerBuffer<const char>(*s.recv, q, offsetIn(*s.recv, out)) + q * bytes
                           : peerBuffer<const char>(*s.send, q, offsetIn(*s.send, call.input));
    char* to = out + q * bytes;
    if (to != from) copyPiece(team, to, from, piece);
  }
}

/// Whether the board and windows are ones this rank's call can run on.
BRAID_HOST_DEVICE bool symmetricCallFits(const SymmetricCall& s, const EngineCall& call) {
  const SymmetricBoard& b = *s.board;
  auto fits = [&](const ncclWindow_vidmem& w) {
    return w.magic == BRAID_WINDOW_MAGIC && w.lsaSize == static_cast<int>(b.nranks) &&
           w.lsaRank == static_cast<int>(b.rank) && w.lsaBases != nullptr;
  };
  return b.nranks >= 1 && b.nranks <= kMaxSymmetricRanks && b.rank < b.nranks &&
         call.nchannels >= 1 && call.nchannels <= kMaxSymmetricBlocks && fits(*s.send) &&
         fits(*s.recv);
}

/// Block `block` of symmetric call `call` of T, reducing with (Pre, F, Post) and `op`'s
/// arguments; an all_gather moves bytes whatever T is.
template <typename T, typename Pre, typename F, typename Post, typename Team>
BRAID_HOST_DEVICE Fault runSymmetric(const Team& team, const OpArgs& op, const EngineArgs& args,
                                     const EngineCall& call, uint32_t block) {
  const SymmetricCall& s = *call.symmetric;
  if (!symmetricCallFits(s, call)) return {FaultCode::kBadCall, -1, s.board->nranks, 0};
  const SymmetricBoard& b = *s.board;
  const uint32_t blk = block - call.firstBlock;
  const size_t grain = kSymmetricGrainBytes / sizeof(T) > 0 ? kSymmetricGrainBytes / sizeof(T) : 1;
  const size_t n = call.sliceElems;
  Fault f = symmetricBarrier(team, args, b, blk);
  if (failed(f)) return f;
  switch (s.kind) {
    case SymmetricKind::kAllReduceOneShot:
      foldFromPeers<T, Pre, F, Post, false>(team, op, s, call,
                                            pieceOf({0, n}, call.nchannels, blk, grain), 0, 0);
      break;
    case SymmetricKind::kAllReduceTwoShot: {
      const ElemRange share = pieceOf({0, n}, b.nranks, b.rank, grain);
      foldFromPeers<T, Pre, F, Post, true>(team, op, s, call,
                                           pieceOf(share, call.nchannels, blk, grain), 0, 0);
      break;
    }
    case SymmetricKind::kReduceScatter:
      foldFromPeers<T, Pre, F, Post, false>(
          team, op, s, call, pieceOf({0, n}, call.nchannels, blk, grain), b.rank * n, 0);
      break;
    case SymmetricKind::kAllGather:
      gatherPiece(team, s, call, blk);
      break;
    default:
      return {FaultCode::kBadCall, -1, static_cast<uint64_t>(s.kind), 0};
  }
  return symmetricBarrier(team, args, b, blk);
}

}  // namespace braid::kernels::engine
