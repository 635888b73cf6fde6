// Ring reduce-scatter: the first half of ring all-reduce, with the chunks
// being the ranks' blocks.
//
// Terms. The N ranks sit on a ring in `order`; a rank at ring position p
// receives from position p-1 ("prev") and sends to p+1 ("next"). Input holds
// N blocks: `count` elements at b*count, or, for the variable-count form
// (braidReduceScatterV), blockCounts[b] elements at blockOffsets[b]. The rank
// that ends with block b's reduction in its output is rank b, so the block a
// ring position works for is that of the rank sitting there, order[q]. Each
// channel owns a contiguous part of every block (channelRange of the block's
// count) and works through it in rounds; round k covers elements
// [k*chunk, (k+1)*chunk) of the channel's part of every block (roundRange in
// ring_common.h), one message per block and step. Blocks of different sizes
// give messages of different sizes, some empty once a block's part is used
// up; an empty step is left out on both ends alike, since the same block,
// round and channel give the same range on every rank. The channel runs as
// many rounds as its largest block needs.
//
// In each round, rank p starts the partial sum of the block of position p-1
// and passes it on; at step j >= 1 it receives what prev sent at step j-1,
// which is the block of position p-1-j:
//   step 0          send             block of p-1
//   steps 1..N-2    recvReduceSend   block of p-1-j
//   step N-1        recvReduceCopy   block of p, its own: output
// So each rank sends and receives N-1 messages per round, and the reduction
// of its own block arrives last, having passed every other rank once.
// Every message is at most one chunk, half a FIFO (planSlices), whatever the
// block sizes, which is all the deadlock argument of ring_common.h needs.
//
// In place (recvbuff == sendbuff + the rank's block offset) the output is the
// rank's own input block. That block is read only by the last step of a
// round, which reads each element before writing it, and rounds and channels
// cover disjoint elements; other steps read other blocks, which must not
// overlap it. So no input element is read after it was overwritten.
#include <algorithm>

#include "algo/ring.h"
#include "algo/ring_common.h"

namespace braid::algo {
namespace {

// Round `round` of channel `channel`: the round's part of every block.
void emitReduceScatterRound(std::vector<Step>& steps, const RingParams& p,
                            const std::vector<int>& order, int pos, int channel, size_t round,
                            size_t chunkElems) {
  const int n = static_cast<int>(order.size());
  const auto [prev, next] = ringNeighboursAt(order, pos);
  for (int j = 0; j < n; ++j) {
    const int block = order[ringMod(pos - 1 - j, n)];
    const ElemRange part = roundRange(blockCount(p, block), p, channel, round, chunkElems);
    if (part.end == part.begin) continue;
    StepOp op = j == 0       ? StepOp::kSend
                : j == n - 1 ? StepOp::kRecvReduceCopy
                             : StepOp::kRecvReduceSend;
    steps.push_back(ringStep(op, prev, next, block, blockOffset(p, block) + part.begin, part.begin,
                             part.end - part.begin));
  }
}

}  // namespace

Result<Schedule> ringReduceScatter(const RingParams& params) {
  return blockRingSchedule(params, Collective::kReduceScatter, "reduce_scatter",
                           /*inputIsBlocked=*/true, emitReduceScatterRound);
}

}  // namespace braid::algo
