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

/// Checks that nranks * count elements (the big side of reduce-scatter and
/// all-gather) can be addressed.
Status checkBlocks(const RingParams& p, const char* collective);

/// A Schedule with the header filled in (ring order resolved) and
/// p.nchannels channels without steps.
Schedule newRingSchedule(const RingParams& p, Collective collective, int root);

/// Ring position of `rank` in `ring`.
int ringPosition(const std::vector<int>& ring, int rank);

/// A half-open range of elements.
struct ElemRange {
  size_t begin = 0;
  size_t end = 0;
};

/// The part of [0, count) that `channel` works on: contiguous, nearly equal
/// parts, the first channels taking the remainder.
ElemRange channelRange(size_t count, int nchannels, int channel);

struct SlicePlan {
  size_t chunkElems;  ///< most elements of one message
  size_t sliceElems;  ///< most elements of one slice
};

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

/// The whole work of a rank alone: one copy of `range` (nothing if empty).
void appendLoneCopy(std::vector<Step>& steps, ElemRange range);

/// A chain's steps (broadcast, reduce): each channel cuts its part into
/// chunks and this rank applies `op` to each, between its ring neighbours.
/// Sets s.sliceElems.
void emitChain(Schedule& s, const RingParams& p, StepOp op);

}  // namespace braid::algo
