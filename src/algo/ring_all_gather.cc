// Ring all-gather: the second half of ring all-reduce, with the chunks being
// the ranks' blocks.
//
// Terms. The N ranks sit on a ring in `order`; a rank at ring position p
// receives from position p-1 ("prev") and sends to p+1 ("next"). Output holds
// N blocks, block b being rank b's input: `count` elements at b*count, or,
// for the variable-count form (braidAllGatherV), blockCounts[b] elements at
// blockOffsets[b]. The block of ring position q is that of rank order[q].
// Each channel owns a contiguous part of every block (channelRange of the
// block's count) and works through it in rounds; round k covers elements
// [k*chunk, (k+1)*chunk) of the channel's part of every block (roundRange in
// ring_common.h), one message per block and step. Blocks of different sizes
// give messages of different sizes, some empty once a block's part is used
// up; an empty step moves nothing and is left out of the schedule on both
// ends alike, because the same block, round and channel give the same range
// on every rank. The channel runs as many rounds as its largest block needs.
//
// In each round, rank p puts its own input in place and passes it on; at
// step j >= 1 it receives what prev sent at step j-1, which is the block of
// position p-j:
//   step 0          copySend       own block: input -> output block, next
//   steps 1..N-2    recvCopySend   block of p-j
//   step N-1        recv           block of p+1, the last one missing
// So each rank sends and receives N-1 messages per round, every block
// travels N-1 hops, and no rank forwards a block back to where it started.
// Every message is at most one chunk, half a FIFO (planSlices), whatever the
// block sizes, which is all the deadlock argument of ring_common.h needs.
//
// In place (sendbuff == recvbuff + the rank's block offset) the input is the
// rank's own output block. Input is read only by step 0 of a round, and the
// only output that step writes is the same elements (the copy is then a
// no-op); other steps write other blocks, which must not overlap it. So no
// input element is overwritten before it is read.
#include <algorithm>

#include "algo/ring.h"
#include "algo/ring_common.h"

namespace braid::algo {
namespace {

// Round `round` of channel `channel`: the round's part of every block.
void emitAllGatherRound(std::vector<Step>& steps, const RingParams& p,
                        const std::vector<int>& order, int pos, int channel, size_t round,
                        size_t chunkElems) {
  const int n = static_cast<int>(order.size());
  const auto [prev, next] = ringNeighboursAt(order, pos);
  for (int j = 0; j < n; ++j) {
    const int block = order[ringMod(pos - j, n)];
    const ElemRange part = roundRange(blockCount(p, block), p, channel, round, chunkElems);
    if (part.end == part.begin) continue;
    StepOp op = j == 0 ? StepOp::kCopySend : j == n - 1 ? StepOp::kRecv : StepOp::kRecvCopySend;
    steps.push_back(ringStep(op, prev, next, block, part.begin, blockOffset(p, block) + part.begin,
                             part.end - part.begin));
  }
}

}  // namespace

Result<Schedule> ringAllGather(const RingParams& params) {
  return blockRingSchedule(params, Collective::kAllGather, "all_gather", /*inputIsBlocked=*/false,
                           emitAllGatherRound);
}

}  // namespace braid::algo
