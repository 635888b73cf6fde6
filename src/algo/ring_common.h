// What the ring generators (ring.cc, ring_*.cc) share: parameter checks, the
// ring order and a rank's place in it, how the work is split between channels
// and how big a chunk and a slice are.
//
// The sizing rule that keeps cyclic ring schedules (all-reduce,
// reduce-scatter, all-gather) free of deadlock lives here, in planSlices:
// every message of a round takes at most half of a connection's FIFO slots.
// A rank that waits for a free slot then has a full FIFO, at most half of it
// the message being written, so its successor has data to read and is a
// whole message behind; a rank that waits to receive has a predecessor that
// is behind it. Every rank waiting would put some rank behind itself around
// the ring, so some rank can always move.
// Chains (broadcast, reduce) end at a rank that only receives, so they never
// deadlock; they use the same sizes so that slices look alike everywhere.
#pragma once

#include <cstddef>

#include "algo/ring.h"
#include "algo/schedule.h"
#include "braid/status.h"

namespace braid::algo {

/// FIFO slots per connection that schedules are sized for. It is
/// transport::kFifoSlots; algo does not depend on transport, so the ring
/// tests check that the two agree.
inline constexpr size_t kFifoSlotsAssumed = 8;
/// Most slices one message of a cyclic ring round may take: half the FIFO.
inline constexpr size_t kMaxSlicesPerMessage = kFifoSlotsAssumed / 2;

/// a mod n in [0, n), also for negative a.
inline int ringMod(int a, int n) { return ((a % n) + n) % n; }

/// Checks what every ring generator needs: ranks, ring order, sizes.
Status checkRingParams(const RingParams& p, const char* collective);

/// Checks a broadcast or reduce root.
Status checkRoot(const RingParams& p, int root, const char* collective);

/// Checks the blocks of reduce-scatter and all-gather: that nranks * count
/// elements (uniform) or every blockOffsets[b] + blockCounts[b] (variable)
/// can be addressed, and that variable blocks are given for every rank.
Status checkBlocks(const RingParams& p, const char* collective);

/// Elements of block `block` (that of rank `block`) of reduce-scatter or all-gather.
inline size_t blockCount(const RingParams& p, int block) {
  return p.blockCounts.empty() ? p.count : p.blockCounts[block];
}
/// First element of block `block` in the big buffer.
inline size_t blockOffset(const RingParams& p, int block) {
  return p.blockOffsets.empty() ? static_cast<size_t>(block) * p.count : p.blockOffsets[block];
}

/// A Schedule with the header filled in (ring order resolved) and
/// p.nchannels channels without steps.
Schedule newRingSchedule(const RingParams& p, Collective collective, int root);

/// Ring position of `rank` in `ring`.
int ringPosition(const std::vector<int>& ring, int rank);

/// The ranks before and after position `pos` of `ring`, the peers a ring
/// step receives from and sends to.
struct RingNeighbours {
  int prev;
  int next;
};
RingNeighbours ringNeighboursAt(const std::vector<int>& ring, int pos);

/// How a ring schedule cuts its work: messages of up to a chunk, moved in slices.
struct SlicePlan {
  size_t chunkElems;  ///< most elements of one message
  size_t sliceElems;  ///< most elements of one slice
};

/// A half-open range of elements.
struct ElemRange {
  size_t begin = 0;
  size_t end = 0;
};

/// The part of [0, count) that `channel` works on: contiguous, nearly equal
/// parts of a multiple of `grain` elements (ScheduleSizes::grainElems), the
/// last channels taking what is left (less, or nothing).
ElemRange channelRange(size_t count, int nchannels, int channel, size_t grain);

/// The part of [0, count) that `channel` works on in round `round` of
/// `chunkElems` elements: empty once the channel's part is used up.
ElemRange roundRange(size_t count, const ScheduleSizes& p, int channel, size_t round,
                     size_t chunkElems);

/// Rounds `channel` needs for the largest of the blocks, each round taking
/// up to chunkElems elements of every block; the same on every rank.
size_t blockRounds(const RingParams& p, int channel, size_t chunkElems);

/// Chunk and slice sizes of reduce-scatter and all-gather, whose largest
/// step is channel 0's part of the largest block.
SlicePlan planBlockSlices(const RingParams& p);

/// Chunk and slice sizes for steps that would carry up to `largestStep`
/// elements without a chunk limit. A slice is a quarter of a chunk (so a
/// step overlaps with its neighbours' along the ring), at least
/// minSliceElems (below which handing over a slot costs more than the
/// overlap saves) and at most maxSliceElems (one FIFO slot); the chunk is
/// then cut to kMaxSlicesPerMessage slices. All ranks compute the same plan.
SlicePlan planSlices(const RingParams& p, size_t largestStep);

/// A step between ring neighbours: recvPeer is set if `op` receives, sendPeer
/// if it sends.
Step ringStep(StepOp op, int prev, int next, int chunk, size_t inOffset, size_t outOffset,
              size_t count);

/// The whole work of a rank alone: one copy of `range` (nothing if empty),
/// from input element inBase + i to output element outBase + i.
void appendLoneCopy(std::vector<Step>& steps, ElemRange range, size_t inBase = 0,
                    size_t outBase = 0);

/// The step a rank `d` places after the root along a chain of `n` ranks takes.
using ChainOpFn = StepOp (*)(int n, int d);

/// A chain's steps (broadcast, reduce): each channel cuts its part into
/// chunks and this rank applies chainOp(N, its distance from `root` along
/// the channel's ring) to each, between its neighbours on that ring.
/// Sets s.sliceElems.
void emitChain(Schedule& s, const RingParams& p, int root, ChainOpFn chainOp);

/// Appends round `round` of channel `channel` of a block-wise ring collective.
using BlockRoundFn = void (*)(std::vector<Step>& steps, const RingParams& p,
                              const std::vector<int>& order, int pos, int channel, size_t round,
                              size_t chunkElems);

/// The frame shared by reduce-scatter and all-gather, which differ only in
/// their rounds: the checks, the schedule, a lone copy when nranks == 1
/// (from input block 0 to the output when `inputIsBlocked`, the other way
/// round otherwise), and every round of every channel.
Result<Schedule> blockRingSchedule(const RingParams& params, Collective collective,
                                   const char* name, bool inputIsBlocked, BlockRoundFn emitRound);

}  // namespace braid::algo
