// The one-shot all-reduce on a GPU, real or emulated: one block runs a
// call, the same code in the CUDA kernel and on the emulated GPU. (The host
// communicators' one-shot is exec/one_shot.cc, over shm.)
//
// Push, then read at home. Every rank stores pre(its input) into its area of
// every peer's board (CUDA IPC: posted stores, nothing waited for), then reads
// only its own board, where its peers' operands arrive, and folds the N
// operands in the in-order binary tree's order (algo::foldInOrder), the same
// order on every rank: all ranks get the same bits, and the tree's bits in
// deterministic mode. One step instead of a ring's 2(N-1), at the price of
// sending its input to N-1 peers at twice its size (the flags): for tiny
// messages.
//
// Terms:
//
//   call        the k-th one-shot all-reduce of the communicator, counted
//               on the device (OneShotState::calls), so that a launch a CUDA
//               graph replays counts too
//   parity      k % 2: a board has two slots and call k is pushed into slot
//               k % 2, so a rank may push call k+1 while slow peers still
//               read call k
//   generation  k / 2, the g-th call of its parity: its cells carry the flag
//               g % flagPeriod + 1, never 0 (a board starts zeroed)
//   area        slot p of rank r's board holds one area per writer: area w
//               is stored into by rank w alone (r's own area stays unused:
//               r takes its own operand from its input)
//   line        16 bytes of an area: two LL cells (ll.h), each a 4-byte flag
//               and 4 bytes of data, so 8 bytes of the operand. An area's
//               line 0 carries the call's size word (sliceWord of its bytes)
//               in its first cell, lines 1.. the operand, the last padded.
//
// Why every cell of a line has its own flag: the writer stores a line with
// one 16-byte store on the GPU (one transaction), but only the store's 8-byte
// halves are single-copy atomic (PTX's vector accesses are accesses of their
// elements), and the emulated GPU stores two 8-byte atomics (an x86 16-byte
// store is not atomic in general, and the host compiler may split one):
// sync.h storeRelaxedPair. A reader that sees both flags has both halves,
// whatever order they landed in; no fence, no counter.
//
// Thread t of the block owns lines t, t + blockDim, ... of the operand:
//
//   push  for each of its lines, it computes pre(input) of those 8 bytes and
//         stores the line into this rank's area of every peer's board (peers
//         from rank + 1 on, so that the ranks do not all store into one board
//         first); the leader stores the size word into each
//   read  the leader waits for every peer's size word, all peers in one
//         polling loop (a rank that called with another count is
//         kSliceMismatch, not a wait for cells that never come); then for each
//         of its lines the thread polls that line of every peer's area in its
//         own board, all missing peers in one pass, until each carries the
//         call's flag, folds the N operands in registers (the fold program,
//         below, on a stack of 8-byte words; its own operand pre(input) again),
//         applies post and writes the line's elements of the output
//
// No scratch in memory and no barrier per peer: the block meets once after
// the size words. A line's input bytes are read (push and read) and its output
// bytes written by one thread, input first, so an in-place call is safe.
//
// Why two slots are enough (exec/one_shot.cc argues it for the host board): a
// rank pushes call k+2 into a peer's slot k % 2 only after it has read every
// peer's call k+1 in its own board, which each peer pushed only after reading
// call k there. On the GPU "after" is the peer's barrier and system fence
// between its last read of call k and its first store of call k+1 (the start
// of runOneShot).
//
// An area keeps, past the lines of its writer's last call, lines of older
// calls of its parity. A reader of generation g polls for flag g % P + 1,
// which lines of generation g - P carried too, and may poll before the writer
// has begun generation g (it knows only that the writer has begun g - 1). So
// before a rank pushes generation g it zeroes its areas of that parity in
// every peer's board if they may still hold lines of generation g + 1 - P
// (they were last zeroed at or before that generation), fencing between the
// zeroes and the new lines: between two zeroings an area holds fewer than P
// generations. With P = 2^32 - 1 that happens once in 2^33 calls; tests make
// P small.
//
// After a call that got as far as its pushes (whether it then succeeded or
// not), a rank tells each peer, after a barrier and a system fence, that it
// has stored everything of call k into the peer's board: its word in the
// peer's pushed words (after the two slots) becomes k + 1 (oneShotPushed).
// A rank that leaves frees its board only once every peer has said so for
// every call this rank began (exec/device_one_shot.cc waitForWriters argues
// why that is enough), not under a slow peer's stores.
//
// The fold is a postfix program the host derives from foldInOrder
// (OneShotBoard::fold): a rank pushes that rank's operand, kFoldCombine
// replaces the two top operands a, b with op(a, b), element by element with
// the functors of reduce_op.h (the host loops' arithmetic). A thread's stack
// is an array of kMaxFoldDepth words, in registers where the compiler can
// index it and in the thread's local memory (L1) where it cannot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

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
/// Bytes of a board's line, and of the operand it carries (two LL cells).
inline constexpr size_t kOneShotLineBytes = 16;
inline constexpr size_t kOneShotLineData = 2 * kLlCellData;

/// What a rank keeps of its one-shot calls, in its own device memory.
struct OneShotState {
  uint64_t calls;        ///< one-shot calls finished
  uint64_t began;        ///< one-shot calls begun (destroy waits for their pushes)
  uint64_t zeroedAt[2];  ///< per parity, the generation at which the areas were last zeroed
  uint32_t stuckOn;      ///< a peer a thread of the last wait that gave up waited for
  uint32_t reserved;
};

/// One rank's view of the boards, in its device memory (made once by
/// exec/device_one_shot.cc).
struct OneShotBoard {
  /// Rank r's board in this process's address space: 2 * nranks areas of areaLines lines,
  /// slot p's area for writer w at line (p * nranks + w) * areaLines (oneShotLine), then the
  /// pushed words, one per writer (oneShotPushed).
  uint64_t* boards[kMaxOneShotRanks];
  OneShotState* state;
  uint64_t areaLines;  ///< the size word's line and the lines of maxBytes
  uint64_t maxBytes;   ///< largest call in bytes; a multiple of the line's data
  uint32_t nranks;
  uint32_t rank;
  uint32_t flagPeriod;  ///< at least 2
  uint32_t nfold;
  int16_t fold[2 * kMaxOneShotRanks];
};

/// Lines of an operand of `bytes`.
BRAID_HOST_DEVICE size_t oneShotLines(size_t bytes) {
  return (bytes + kOneShotLineData - 1) / kOneShotLineData;
}
/// Lines of an area for calls of up to maxBytes: the size word's, then the operand's.
BRAID_HOST_DEVICE size_t oneShotAreaLines(size_t maxBytes) { return 1 + oneShotLines(maxBytes); }
/// Bytes of a board: its two slots of nranks areas, then kMaxOneShotRanks pushed words.
BRAID_HOST_DEVICE size_t oneShotBoardBytes(size_t maxBytes, uint32_t nranks) {
  return 2 * nranks * oneShotAreaLines(maxBytes) * kOneShotLineBytes +
         kMaxOneShotRanks * sizeof(uint64_t);
}

/// Line `line` (its two cells) of writer w's area in slot `parity` of reader r's board.
BRAID_HOST_DEVICE uint64_t* oneShotLine(const OneShotBoard& b, uint32_t r, uint32_t parity,
                                        uint32_t w, size_t line) {
  const size_t at = (static_cast<size_t>(parity) * b.nranks + w) * b.areaLines + line;
  return b.boards[r] + at * (kOneShotLineBytes / sizeof(uint64_t));
}

/// Reader r's pushed words: word w is the calls of w whose stores into r's board are done.
BRAID_HOST_DEVICE uint64_t* oneShotPushed(const OneShotBoard& b, uint32_t r) {
  return oneShotLine(b, r, 2, 0, 0);
}

/// This rank's j-th peer (1 <= j < nranks), in the order a rank stores into its peers' boards:
/// from the rank after it on, so that the ranks do not all store into one board first.
BRAID_HOST_DEVICE uint32_t oneShotPeerAfter(const OneShotBoard& b, uint32_t j) {
  return (b.rank + j) % b.nranks;
}

/// The peers' bits (ranks below nranks but this one).
BRAID_HOST_DEVICE uint32_t oneShotPeers(const OneShotBoard& b) {
  const uint32_t all = b.nranks >= 32 ? 0xffffffffu : (1u << b.nranks) - 1;
  return all & ~(1u << b.rank);
}

/// The lowest rank of `mask`, or -1 for none.
BRAID_HOST_DEVICE int lowestRank(uint32_t mask) {
  for (int r = 0; r < 32; ++r) {
    if ((mask >> r & 1u) != 0) return r;
  }
  return -1;
}

/// Whether the fold program is one a thread's stack can run, leaving one operand.
BRAID_HOST_DEVICE bool foldFits(const OneShotBoard& b) {
  if (b.nfold > 2 * kMaxOneShotRanks) return false;
  uint32_t depth = 0;
  for (uint32_t i = 0; i < b.nfold; ++i) {
    if (b.fold[i] == kFoldCombine) {
      if (depth < 2) return false;
      --depth;
    } else {
      if (depth == kMaxFoldDepth || b.fold[i] < 0 || static_cast<uint32_t>(b.fold[i]) >= b.nranks)
        return false;
      ++depth;
    }
  }
  return depth == 1;
}

/// The operand's line `line` of an input of n elements T: pre of its elements in its bytes,
/// zero bytes past the last element.
template <typename T, typename Pre>
BRAID_HOST_DEVICE uint64_t preLine(const T* in, size_t n, size_t line, const Pre& pre) {
  constexpr size_t kElems = kOneShotLineData / sizeof(T);
  const size_t first = line * kElems;
  const size_t have = n - first < kElems ? n - first : kElems;
  unsigned char bytes[kOneShotLineData] = {};
  for (size_t j = 0; j < have; ++j) {
    const T x = pre(in[first + j]);
    memcpy(bytes + j * sizeof(T), &x, sizeof(T));
  }
  uint64_t word;
  memcpy(&word, bytes, sizeof word);
  return word;
}

/// op(a, b) over the elements T of two lines' operand bytes.
template <typename T, typename F>
BRAID_HOST_DEVICE uint64_t combineLine(uint64_t a, uint64_t b) {
  constexpr size_t kElems = kOneShotLineData / sizeof(T);
  T x[kElems];
  T y[kElems];
  memcpy(x, &a, sizeof x);
  memcpy(y, &b, sizeof y);
  for (size_t j = 0; j < kElems; ++j) x[j] = F()(x[j], y[j]);
  memcpy(&a, x, sizeof a);
  return a;
}

/// Writes post of the elements of line `line` (n elements in all) to `out`.
template <typename T, typename Post>
BRAID_HOST_DEVICE void storeOutputLine(T* out, size_t n, size_t line, uint64_t word,
                                       const Post& post) {
  constexpr size_t kElems = kOneShotLineData / sizeof(T);
  const size_t first = line * kElems;
  const size_t have = n - first < kElems ? n - first : kElems;
  T x[kElems];
  memcpy(x, &word, sizeof x);
  for (size_t j = 0; j < have; ++j) out[first + j] = post(x[j]);
}

/// Zeroes this rank's areas of slot `parity` in every peer's board, if generation g needs it
/// (above), fenced before the new lines.
template <typename Team>
BRAID_HOST_DEVICE void zeroAreasIfDue(const Team& team, const OneShotBoard& b, uint32_t parity,
                                      uint64_t g) {
  if (g + 1 < b.flagPeriod + b.state->zeroedAt[parity]) return;
  for (uint32_t j = 1; j < b.nranks; ++j) {
    const uint32_t q = oneShotPeerAfter(b, j);
    for (size_t i = team.rank(); i < b.areaLines; i += team.size()) {
      storeRelaxedPair(oneShotLine(b, q, parity, b.rank, i), 0, 0);
    }
  }
  fenceSystem();
  team.sync();
  if (team.leader()) b.state->zeroedAt[parity] = g;
}

/// Stores pre(input) of n elements (`bytes` of them) into this rank's area of slot `parity`
/// of every peer's board, the lines carrying `flag`; the leader stores the size word.
template <typename T, typename Pre, typename Team>
BRAID_HOST_DEVICE void pushOperand(const Team& team, const OneShotBoard& b, uint32_t parity,
                                   uint32_t flag, const T* in, size_t n, size_t bytes,
                                   const Pre& pre) {
  const size_t lines = oneShotLines(bytes);
  for (size_t i = team.rank(); i < lines; i += team.size()) {
    const uint64_t word = preLine(in, n, i, pre);
    const uint64_t low = makeCell(flag, static_cast<uint32_t>(word));
    const uint64_t high = makeCell(flag, static_cast<uint32_t>(word >> 32));
    for (uint32_t j = 1; j < b.nranks; ++j) {
      storeRelaxedPair(oneShotLine(b, oneShotPeerAfter(b, j), parity, b.rank, 1 + i), low, high);
    }
  }
  if (team.leader()) {
    for (uint32_t j = 1; j < b.nranks; ++j) {
      storeRelaxed(oneShotLine(b, oneShotPeerAfter(b, j), parity, b.rank, 0),
                   makeCell(flag, sliceWord(bytes, true)));
    }
  }
}

/// The leader waits for every peer's size word in slot `parity` of its own board: a peer
/// whose word says another size than `bytes` is kSliceMismatch (the lowest such peer among
/// those seen first), a wait that gives up names the lowest peer still missing.
BRAID_HOST_DEVICE Fault waitForSizes(const EngineArgs& args, const OneShotBoard& b, uint32_t parity,
                                     uint32_t flag, size_t bytes) {
  uint32_t missing = oneShotPeers(b);
  Fault mismatch = noFault();
  Fault f = waitUntil(
      args,
      [&] {
        for (uint32_t w = 0; w < b.nranks; ++w) {
          if ((missing >> w & 1u) == 0) continue;
          const uint64_t cell = loadRelaxed(oneShotLine(b, b.rank, parity, w, 0));
          if (flagOf(cell) != flag) continue;
          missing &= ~(1u << w);
          if (!failed(mismatch)) mismatch = checkSlice(dataOf(cell), bytes, true, true, w);
        }
        return missing == 0 || failed(mismatch);
      },
      lowestRank(missing));
  if (failed(mismatch)) return mismatch;
  if (failed(f)) f.peer = lowestRank(missing);
  return f;
}

/// Waits until line `line` of every peer's area in slot `parity` of this rank's board carries
/// `flag` in both cells, polling every missing peer in each pass, and puts peer w's operand
/// bytes in words[w]. A wait that gives up names the lowest peer still missing.
BRAID_HOST_DEVICE Fault waitForLine(const EngineArgs& args, const OneShotBoard& b, uint32_t parity,
                                    uint32_t flag, size_t line,
                                    uint64_t (&words)[kMaxOneShotRanks]) {
  uint32_t missing = oneShotPeers(b);
  Fault f = waitUntil(
      args,
      [&] {
        for (uint32_t w = 0; w < b.nranks; ++w) {
          if ((missing >> w & 1u) == 0) continue;
          uint64_t low = 0;
          uint64_t high = 0;
          loadRelaxedPair(oneShotLine(b, b.rank, parity, w, 1 + line), &low, &high);
          if (flagOf(low) != flag || flagOf(high) != flag) continue;
          words[w] = uint64_t{dataOf(high)} << 32 | dataOf(low);
          missing &= ~(1u << w);
        }
        return missing == 0;
      },
      lowestRank(missing));
  if (failed(f)) f.peer = lowestRank(missing);
  return f;
}

/// The fold of one line's operands (words[w] rank w's, `own` this rank's) by the program.
template <typename T, typename F>
BRAID_HOST_DEVICE uint64_t foldLine(const OneShotBoard& b,
                                    const uint64_t (&words)[kMaxOneShotRanks], uint64_t own) {
  uint64_t stack[kMaxFoldDepth] = {};  // (the program leaves stack[0] set: foldFits)
  uint32_t depth = 0;
  for (uint32_t i = 0; i < b.nfold; ++i) {
    const int16_t f = b.fold[i];
    if (f == kFoldCombine) {
      --depth;
      stack[depth - 1] = combineLine<T, F>(stack[depth - 1], stack[depth]);
    } else {
      stack[depth++] = static_cast<uint32_t>(f) == b.rank ? own : words[f];
    }
  }
  return stack[0];
}

/// Every thread reads its lines of the peers' operands from its own board, folds them with
/// its own and writes the output; the fault is the same on every thread.
template <typename T, typename Pre, typename F, typename Post, typename Team>
BRAID_HOST_DEVICE Fault readAndFold(const Team& team, const EngineArgs& args, const OpArgs& op,
                                    const OneShotBoard& b, uint32_t parity, uint32_t flag,
                                    const EngineCall& call) {
  const size_t n = call.sliceElems;
  const size_t bytes = n * sizeof(T);
  Fault fault = team.leader() ? waitForSizes(args, b, parity, flag, bytes) : noFault();
  fault = team.share(fault);
  if (failed(fault)) return fault;
  const Pre pre(op);
  const Post post(op);
  const T* in = static_cast<const T*>(call.input);
  Fault mine = noFault();
  for (size_t i = team.rank(); i < oneShotLines(bytes); i += team.size()) {
    uint64_t words[kMaxOneShotRanks];
    mine = waitForLine(args, b, parity, flag, i, words);
    if (failed(mine)) {
      storeRelaxed(&b.state->stuckOn, static_cast<uint32_t>(mine.peer));
      break;
    }
    const uint64_t folded = foldLine<T, F>(b, words, preLine(in, n, i, pre));
    storeOutputLine(static_cast<T*>(call.output), n, i, folded, post);
  }
  if (!team.any(failed(mine))) return noFault();
  const int stuck = static_cast<int>(loadRelaxed(&b.state->stuckOn));
  return team.share(failed(mine) ? mine : whyStopped(args, stuck));
}

/// Runs one-shot call `call` (its element count in sliceElems) of T, reducing with
/// (Pre, F, Post) and `op`'s arguments, on `team`.
template <typename T, typename Pre, typename F, typename Post, typename Team>
BRAID_HOST_DEVICE Fault runOneShot(const Team& team, const OpArgs& op, const EngineArgs& args,
                                   const EngineCall& call) {
  const OneShotBoard& b = *call.oneShot;
  const size_t bytes = call.sliceElems * sizeof(T);
  if (b.nranks > kMaxOneShotRanks || b.rank >= b.nranks || b.flagPeriod < 2 || !foldFits(b)) {
    return {FaultCode::kBadCall, -1, b.nranks, b.nfold};
  }
  // The reads of the previous call come before this call's stores (above).
  team.sync();
  if (team.leader()) fenceSystem();
  const uint64_t k = team.share(team.leader() ? b.state->calls : 0);
  const uint32_t parity = static_cast<uint32_t>(k & 1);
  const uint64_t g = k >> 1;
  const uint32_t flag = static_cast<uint32_t>(g % b.flagPeriod) + 1;
  if (team.leader()) b.state->began = k + 1;
  Fault fault = noFault();
  if (bytes > b.maxBytes) {
    fault = {FaultCode::kBadCall, -1, bytes, b.maxBytes};
  } else {
    zeroAreasIfDue(team, b, parity, g);
    pushOperand(team, b, parity, flag, static_cast<const T*>(call.input), call.sliceElems, bytes,
                Pre(op));
    fault = readAndFold<T, Pre, F, Post>(team, args, op, b, parity, flag, call);
  }
  // Every store of this call into the peers' boards is done (the barrier; the fence makes
  // them visible before the pushed words); a call that failed before pushing pushed nothing.
  team.sync();
  if (team.leader()) {
    fenceSystem();
    for (uint32_t j = 1; j < b.nranks; ++j) {
      storeRelaxed(oneShotPushed(b, oneShotPeerAfter(b, j)) + b.rank, k + 1);
    }
    if (!failed(fault)) b.state->calls = k + 1;
  }
  return fault;
}

}  // namespace braid::kernels::engine
