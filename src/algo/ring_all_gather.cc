// Ring all-gather: the second half of ring all-reduce, with the chunks being
// the ranks' blocks.
//
// Terms. The N ranks sit on a ring in `order`; a rank at ring position p
// receives from position p-1 ("prev") and sends to p+1 ("next"). Output holds
// N blocks of `count` elements, block b = [b*count, (b+1)*count) being rank
// b's input, so the block of ring position q is that of rank order[q]. Each
// channel owns a contiguous part [begin, end) of every block and works
// through it in rounds; a round covers the same `len` elements (at most one
// chunk, planSlices in ring_common.h) of every block, one message per step.
//
// In each round, rank p puts its own input in place and passes it on; at
// step j >= 1 it receives what prev sent at step j-1, which is the block of
// position p-j:
//   step 0          copySend       own block: input -> output block, next
//   steps 1..N-2    recvCopySend   block of p-j
//   step N-1        recv           block of p+1, the last one missing
// So each rank sends and receives N-1 messages per round, every block
// travels N-1 hops, and no rank forwards a block back to where it started.
//
// In place (sendbuff == recvbuff + rank*count) the input is the rank's own
// output block. Input is read only by step 0 of a round, and the only output
// that step writes is the same elements (the copy is then a no-op); other
// steps write other blocks. So no input element is overwritten before it is
// read.
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
    const int block = order[ringMod(pos - j, n)];
    StepOp op = j == 0 ? StepOp::kCopySend : j == n - 1 ? StepOp::kRecv : StepOp::kRecvCopySend;
    steps.push_back(
        ringStep(op, prev, next, block, base, static_cast<size_t>(block) * count + base, len));
  }
}

}  // namespace

Result<Schedule> ringAllGather(const RingParams& params) {
  BRAID_TRY(checkRingParams(params, "all_gather"));
  BRAID_TRY(checkBlocks(params, "all_gather"));
  Schedule s = newRingSchedule(params, Collective::kAllGather, -1);
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
