// Ring all-reduce: reduce-scatter followed by all-gather on one ring.
//
// Terms. The N ranks sit on a ring in `order`; a rank at ring position p
// receives from position p-1 ("prev") and sends to p+1 ("next"). Each channel
// owns a contiguous part of the buffer and works through it in rounds; a round
// covers N chunks of at most chunkElems elements, so that every message of a
// round fits in the FIFO (the executor never needs the receiver to make room
// before it can post the first step, which rules out deadlock).
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
#include "algo/ring.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace braid::algo {
namespace {

int mod(int a, int n) { return ((a % n) + n) % n; }

Status checkParams(const RingParams& p) {
  if (p.nranks <= 0) return invalidArgument("ring: nranks must be positive");
  if (p.rank < 0 || p.rank >= p.nranks) return invalidArgument("ring: rank out of range");
  if (p.nchannels <= 0) return invalidArgument("ring: nchannels must be positive");
  if (p.chunkElems == 0 || p.maxSliceElems == 0) {
    return invalidArgument("ring: chunk and slice sizes must be positive");
  }
  if (!p.order.empty()) {
    if (static_cast<int>(p.order.size()) != p.nranks) {
      return invalidArgument("ring: order has " + std::to_string(p.order.size()) +
                             " ranks, expected " + std::to_string(p.nranks));
    }
    std::vector<int> sorted = p.order;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < p.nranks; ++i) {
      if (sorted[i] != i) return invalidArgument("ring: order is not a permutation of ranks");
    }
  }
  return Status::success();
}

// One round of one channel: `base` is the round's first element, `roundElems`
// how many it covers; chunk c is [base + c*chunk, ...) clipped to the round.
void emitRound(std::vector<Step>& steps, const std::vector<int>& order, int pos, size_t base,
               size_t roundElems) {
  const int n = static_cast<int>(order.size());
  const size_t chunk = (roundElems + n - 1) / n;
  const int prev = order[mod(pos - 1, n)];
  const int next = order[mod(pos + 1, n)];
  auto add = [&](StepOp op, int chunkIndex) {
    size_t begin = std::min(roundElems, static_cast<size_t>(chunkIndex) * chunk);
    size_t end = std::min(roundElems, begin + chunk);
    int recvPeer = stepReceives(op) ? prev : -1;
    int sendPeer = stepSends(op) ? next : -1;
    steps.push_back({op, recvPeer, sendPeer, chunkIndex, base + begin, base + begin, end - begin});
  };
  add(StepOp::kSend, pos);
  for (int j = 1; j <= n - 2; ++j) add(StepOp::kRecvReduceSend, mod(pos - j, n));
  add(StepOp::kRecvReduceCopySend, mod(pos + 1, n));
  for (int j = n; j <= 2 * n - 3; ++j) add(StepOp::kRecvCopySend, mod(pos + 1 - (j - n + 1), n));
  add(StepOp::kRecv, mod(pos + 2, n));
}

}  // namespace

Result<Schedule> ringAllReduce(const RingParams& params) {
  BRAID_TRY(checkParams(params));
  Schedule s;
  s.collective = Collective::kAllReduce;
  s.rank = params.rank;
  s.nranks = params.nranks;
  s.count = params.count;
  s.ring = params.order;
  if (s.ring.empty()) {
    s.ring.resize(params.nranks);
    std::iota(s.ring.begin(), s.ring.end(), 0);
  }
  const int n = params.nranks;
  const int pos =
      static_cast<int>(std::find(s.ring.begin(), s.ring.end(), params.rank) - s.ring.begin());
  s.channels.resize(params.nchannels);
  // Slices: a quarter of a chunk, so a step overlaps with its neighbours'
  // (pipelining along the ring), but at least minSliceElems, below which the
  // hand-off of a slot costs more than the overlap saves, and never more
  // than a FIFO slot.
  size_t perRank = (params.count + n - 1) / n;
  size_t chunk = std::min(params.chunkElems, std::max<size_t>(perRank, 1));
  size_t slice = std::max<size_t>((chunk + 3) / 4, std::max<size_t>(params.minSliceElems, 1));
  s.sliceElems = std::min(params.maxSliceElems, slice);

  // Channels split the buffer into contiguous, nearly equal parts.
  size_t perChannel = (params.count + params.nchannels - 1) / params.nchannels;
  for (int c = 0; c < params.nchannels; ++c) {
    size_t begin = std::min(params.count, c * perChannel);
    size_t end = std::min(params.count, begin + perChannel);
    auto& steps = s.channels[c].steps;
    if (n == 1) {
      if (end > begin) steps.push_back({StepOp::kCopy, -1, -1, 0, begin, begin, end - begin});
      continue;
    }
    const size_t roundMax = params.chunkElems * n;
    for (size_t base = begin; base < end; base += roundMax) {
      emitRound(steps, s.ring, pos, base, std::min(roundMax, end - base));
    }
  }
  return s;
}

}  // namespace braid::algo
