// Ring all-reduce: reduce-scatter followed by all-gather on one ring.
//
// Terms. The N ranks sit on a ring in `order`; a rank at ring position p
// receives from position p-1 ("prev") and sends to p+1 ("next"). Each channel
// owns a contiguous part of the buffer and works through it in rounds; a round
// covers N chunks of at most chunkElems elements, each message small enough
// (planSlices in ring_common.h) that the rounds cannot deadlock on the FIFOs.
//
// In each round, rank p sends chunk p at step 0. At step j >= 1 it receives
// the message prev sent at step j-1, which is chunk p-j (mod N):
//   step 0            send                 chunk p          reduce-scatter
//   steps 1..N-2      recvReduceSend       chunk p-j
//   step N-1          recvReduceCopySend   chunk p+1        now fully reduced
//   steps N..2N-3     recvCopySend         chunk p+1-(j-N+1) all-gather
//   step 2N-2         recv                 chunk p+2
// So each rank sends and receives 2(N-1) messages of one chunk per round, the
// bandwidth-optimal count, and every rank ends with every reduced chunk.
//
// In place (sendbuff == recvbuff) is safe: a round reads each input chunk
// once, in steps 0..N-1, and writes output only from step N-1 on, where the
// one chunk read and written in the same step is read before it is written,
// element by element.
#include <algorithm>

#include "algo/ring.h"
#include "algo/ring_common.h"

namespace braid::algo {
namespace {

// One round of one channel: `base` is the round's first element, `roundElems`
// how many it covers; chunk c is [base + c*chunk, ...) clipped to the round.
void emitRound(std::vector<Step>& steps, const std::vector<int>& order, int pos, size_t base,
               size_t roundElems, size_t grain) {
  const int n = static_cast<int>(order.size());
  const size_t chunk = roundUpTo((roundElems + n - 1) / n, grain);
  const RingNeighbours peers = ringNeighboursAt(order, pos);
  auto add = [&](StepOp op, int chunkIndex) {
    size_t begin = std::min(roundElems, static_cast<size_t>(chunkIndex) * chunk);
    size_t end = std::min(roundElems, begin + chunk);
    steps.push_back(
        ringStep(op, peers.prev, peers.next, chunkIndex, base + begin, base + begin, end - begin));
  };
  add(StepOp::kSend, pos);
  for (int j = 1; j <= n - 2; ++j) add(StepOp::kRecvReduceSend, ringMod(pos - j, n));
  add(StepOp::kRecvReduceCopySend, ringMod(pos + 1, n));
  for (int j = n; j <= 2 * n - 3; ++j) {
    add(StepOp::kRecvCopySend, ringMod(pos + 1 - (j - n + 1), n));
  }
  add(StepOp::kRecv, ringMod(pos + 2, n));
}

}  // namespace

Result<Schedule> ringAllReduce(const RingParams& params) {
  BRAID_TRY(checkRingParams(params, "all_reduce"));
  Schedule s = newRingSchedule(params, Collective::kAllReduce, -1);
  const int n = params.nranks;
  const SlicePlan plan = planSlices(params, (params.count + n - 1) / n);
  s.sliceElems = plan.sliceElems;
  for (int c = 0; c < params.nchannels; ++c) {
    const ElemRange range = channelRange(params.count, params.nchannels, c, params.grainElems);
    auto& steps = s.channels[c].steps;
    if (n == 1) {
      appendLoneCopy(steps, range);
      continue;
    }
    const size_t roundMax = plan.chunkElems * n;
    const std::vector<int>& ring = s.channels[c].ring;
    const int pos = ringPosition(ring, params.rank);
    for (size_t base = range.begin; base < range.end; base += roundMax) {
      emitRound(steps, ring, pos, base, std::min(roundMax, range.end - base), params.grainElems);
    }
  }
  return s;
}

Result<Schedule> ringSchedule(Collective collective, const RingParams& params, int root) {
  switch (collective) {
    case Collective::kAllReduce:
      return ringAllReduce(params);
    case Collective::kReduceScatter:
      return ringReduceScatter(params);
    case Collective::kAllGather:
      return ringAllGather(params);
    case Collective::kBroadcast:
      return ringBroadcast(params, root);
    case Collective::kReduce:
      return ringReduce(params, root);
  }
  return invalidArgument("unknown collective " + std::to_string(static_cast<int>(collective)));
}

}  // namespace braid::algo
