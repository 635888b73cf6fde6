// Ring reduce-scatter: the first half of ring all-reduce, with the chunks
// being the ranks' blocks.
//
// Terms. The N ranks sit on a ring in `order`; a rank at ring position p
// receives from position p-1 ("prev") and sends to p+1 ("next"). Input holds
// N blocks of `count` elements, block b = [b*count, (b+1)*count); the rank
// that ends with block b's reduction in its output is rank b, so the block a
// ring position works for is that of the rank sitting there, order[q]. Each
// channel owns a contiguous part [begin, end) of every block and works
// through it in rounds; a round covers the same `len` elements (at most one
// chunk, planSlices in ring_common.h) of every block, one message per step.
//
// In each round, rank p starts the partial sum of the block of position p-1
// and passes it on; at step j >= 1 it receives what prev sent at step j-1,
// which is the block of position p-1-j:
//   step 0          send             block of p-1
//   steps 1..N-2    recvReduceSend   block of p-1-j
//   step N-1        recvReduceCopy   block of p, its own: output
// So each rank sends and receives N-1 messages per round, and the reduction
// of its own block arrives last, having passed every other rank once.
//
// In place (recvbuff == sendbuff + rank*count) the output is the rank's own
// input block. That block is read only by the last step of a round, which
// reads each element before writing it, and rounds and channels cover
// disjoint elements, so no input element is read after it was overwritten.
#include <algorithm>

#include "algo/ring.h"
#include "algo/ring_common.h"

namespace braid::algo {
namespace {

// One round of one channel: elements [base, base + len) of every block.
void emitRound(std::vector<Step>& steps, const std::vector<int>& order, int pos, size_t count,
               size_t base, size_t len) {
  const int n = static_cast<int>(order.size());
  const int prev = order[ringMod(pos - 1, n)];
  const int next = order[ringMod(pos + 1, n)];
  for (int j = 0; j < n; ++j) {
    const int block = order[ringMod(pos - 1 - j, n)];
    StepOp op = j == 0       ? StepOp::kSend
                : j == n - 1 ? StepOp::kRecvReduceCopy
                             : StepOp::kRecvReduceSend;
    steps.push_back(
        ringStep(op, prev, next, block, static_cast<size_t>(block) * count + base, base, len));
  }
}

}  // namespace

Result<Schedule> ringReduceScatter(const RingParams& params) {
  BRAID_TRY(checkRingParams(params, "reduce_scatter"));
  BRAID_TRY(checkBlocks(params, "reduce_scatter"));
  Schedule s = newRingSchedule(params, Collective::kReduceScatter, -1);
  const int n = params.nranks;
  const int pos = ringPosition(s.ring, params.rank);
  const size_t count = params.count;
  const SlicePlan plan = planSlices(params, channelRange(count, params.nchannels, 0).end);
  s.sliceElems = plan.sliceElems;
  for (int c = 0; c < params.nchannels; ++c) {
    const ElemRange range = channelRange(count, params.nchannels, c);
    auto& steps = s.channels[c].steps;
    if (n == 1) {
      appendLoneCopy(steps, range);
      continue;
    }
    for (size_t base = range.begin; base < range.end; base += plan.chunkElems) {
      emitRound(steps, s.ring, pos, count, base, std::min(plan.chunkElems, range.end - base));
    }
  }
  return s;
}

}  // namespace braid::algo
