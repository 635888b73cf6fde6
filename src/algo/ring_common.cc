// Helpers shared by the ring generators (see ring_common.h).
#include "algo/ring_common.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

namespace braid::algo {

namespace {

Status checkOrder(const std::vector<int>& order, int nranks, const std::string& who) {
  if (order.empty()) return Status::success();
  if (static_cast<int>(order.size()) != nranks) {
    return invalidArgument(who + "has " + std::to_string(order.size()) + " ranks, expected " +
                           std::to_string(nranks));
  }
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < nranks; ++i) {
    if (sorted[i] != i) return invalidArgument(who + "is not a permutation of ranks");
  }
  return Status::success();
}

}  // namespace

Status checkRingParams(const RingParams& p, const char* collective) {
  const std::string who = std::string("ring ") + collective + ": ";
  BRAID_TRY(checkSizes(p, who));
  BRAID_TRY(checkOrder(p.order, p.nranks, who + "order "));
  for (size_t c = 0; c < p.channelOrders.size(); ++c) {
    if (p.channelOrders[c].empty()) {
      return invalidArgument(who + "channel order " + std::to_string(c) + " is empty");
    }
    BRAID_TRY(
        checkOrder(p.channelOrders[c], p.nranks, who + "channel order " + std::to_string(c) + " "));
  }
  return Status::success();
}

Status checkRoot(const RingParams& p, int root, const char* collective) {
  return checkRoot(p, root, std::string("ring ") + collective + ": ");
}

Status checkBlocks(const RingParams& p, const char* collective) {
  const std::string who = std::string("ring ") + collective + ": ";
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  if (p.blockCounts.empty() && p.blockOffsets.empty()) {
    if (p.count > kMax / static_cast<size_t>(p.nranks)) {
      return invalidArgument(who + "count " + std::to_string(p.count) + " times " +
                             std::to_string(p.nranks) + " ranks overflows");
    }
    return Status::success();
  }
  const size_t n = static_cast<size_t>(p.nranks);
  if (p.blockCounts.size() != n || p.blockOffsets.size() != n) {
    return invalidArgument(who + "variable blocks need " + std::to_string(n) +
                           " counts and offsets, got " + std::to_string(p.blockCounts.size()) +
                           " and " + std::to_string(p.blockOffsets.size()));
  }
  for (size_t b = 0; b < n; ++b) {
    if (p.blockOffsets[b] > kMax - p.blockCounts[b]) {
      return invalidArgument(who + "block " + std::to_string(b) + " (offset " +
                             std::to_string(p.blockOffsets[b]) + ", count " +
                             std::to_string(p.blockCounts[b]) + ") ends past SIZE_MAX");
    }
  }
  return Status::success();
}

Schedule newRingSchedule(const RingParams& p, Collective collective, int root) {
  Schedule s = newSchedule(p, collective, root);
  std::vector<int> identity(p.nranks);
  std::iota(identity.begin(), identity.end(), 0);
  for (size_t c = 0; c < s.channels.size(); ++c) {
    std::vector<int>& ring = s.channels[c].ring;
    if (!p.channelOrders.empty()) {
      ring = p.channelOrders[c % p.channelOrders.size()];
    } else {
      ring = p.order.empty() ? identity : p.order;
    }
  }
  return s;
}

int ringPosition(const std::vector<int>& ring, int rank) {
  return static_cast<int>(std::find(ring.begin(), ring.end(), rank) - ring.begin());
}

RingNeighbours ringNeighboursAt(const std::vector<int>& ring, int pos) {
  const int n = static_cast<int>(ring.size());
  return {ring[ringMod(pos - 1, n)], ring[ringMod(pos + 1, n)]};
}

ElemRange channelRange(size_t count, int nchannels, int channel, size_t grain) {
  const size_t perChannel = roundUpTo((count + nchannels - 1) / nchannels, grain);
  ElemRange r;
  r.begin = std::min(count, static_cast<size_t>(channel) * perChannel);
  r.end = std::min(count, r.begin + perChannel);
  return r;
}

SlicePlan planSlices(const RingParams& p, size_t largestStep) {
  // Both stay multiples of the grain: p.chunkElems and p.maxSliceElems are (checkSizes).
  size_t chunk = std::min(p.chunkElems, roundUpTo(std::max<size_t>(largestStep, 1), p.grainElems));
  size_t slice = std::max((chunk + kMaxSlicesPerMessage - 1) / kMaxSlicesPerMessage,
                          std::max<size_t>(p.minSliceElems, 1));
  slice = std::min(p.maxSliceElems, roundUpTo(slice, p.grainElems));
  return {std::min(chunk, slice * kMaxSlicesPerMessage), slice};
}

namespace {

// Rounds of chunkElems that `len` elements take, without overflowing.
size_t roundsFor(size_t len, size_t chunkElems) {
  return len / chunkElems + (len % chunkElems != 0 ? 1 : 0);
}

}  // namespace

ElemRange roundRange(size_t count, const ScheduleSizes& p, int channel, size_t round,
                     size_t chunkElems) {
  const ElemRange part = channelRange(count, p.nchannels, channel, p.grainElems);
  if (round >= roundsFor(part.end - part.begin, chunkElems)) return {part.end, part.end};
  const size_t begin = part.begin + round * chunkElems;
  return {begin, begin + std::min(chunkElems, part.end - begin)};
}

size_t blockRounds(const RingParams& p, int channel, size_t chunkElems) {
  size_t rounds = 0;
  for (int b = 0; b < p.nranks; ++b) {
    const ElemRange part = channelRange(blockCount(p, b), p.nchannels, channel, p.grainElems);
    rounds = std::max(rounds, roundsFor(part.end - part.begin, chunkElems));
  }
  return rounds;
}

SlicePlan planBlockSlices(const RingParams& p) {
  size_t largest = 0;
  for (int b = 0; b < p.nranks; ++b) largest = std::max(largest, blockCount(p, b));
  return planSlices(p, channelRange(largest, p.nchannels, 0, p.grainElems).end);
}

Step ringStep(StepOp op, int prev, int next, int chunk, size_t inOffset, size_t outOffset,
              size_t count) {
  return makeStep(op, prev, next, chunk, inOffset, outOffset, count);
}

void appendLoneCopy(std::vector<Step>& steps, ElemRange range, size_t inBase, size_t outBase) {
  if (range.end > range.begin) {
    steps.push_back(ringStep(StepOp::kCopy, -1, -1, 0, inBase + range.begin, outBase + range.begin,
                             range.end - range.begin));
  }
}

void emitChain(Schedule& s, const RingParams& p, int root, ChainOpFn chainOp) {
  const SlicePlan plan = planSlices(p, channelRange(p.count, p.nchannels, 0, p.grainElems).end);
  s.sliceElems = plan.sliceElems;
  for (int c = 0; c < p.nchannels; ++c) {
    const std::vector<int>& ring = s.channels[c].ring;
    const int pos = ringPosition(ring, p.rank);
    const auto [prev, next] = ringNeighboursAt(ring, pos);
    const StepOp op = chainOp(p.nranks, ringMod(pos - ringPosition(ring, root), p.nranks));
    const ElemRange range = channelRange(p.count, p.nchannels, c, p.grainElems);
    int chunk = 0;
    for (size_t base = range.begin; base < range.end; base += plan.chunkElems, ++chunk) {
      const size_t len = std::min(plan.chunkElems, range.end - base);
      s.channels[c].steps.push_back(ringStep(op, prev, next, chunk, base, base, len));
    }
  }
}

Result<Schedule> blockRingSchedule(const RingParams& params, Collective collective,
                                   const char* name, bool inputIsBlocked, BlockRoundFn emitRound) {
  BRAID_TRY(checkRingParams(params, name));
  BRAID_TRY(checkBlocks(params, name));
  Schedule s = newRingSchedule(params, collective, -1);
  s.count = blockCount(params, params.rank);
  const SlicePlan plan = planBlockSlices(params);
  s.sliceElems = plan.sliceElems;
  const size_t blockedBase = blockOffset(params, 0);
  for (int c = 0; c < params.nchannels; ++c) {
    auto& steps = s.channels[c].steps;
    if (params.nranks == 1) {
      appendLoneCopy(steps, channelRange(s.count, params.nchannels, c, params.grainElems),
                     inputIsBlocked ? blockedBase : 0, inputIsBlocked ? 0 : blockedBase);
      continue;
    }
    const size_t rounds = blockRounds(params, c, plan.chunkElems);
    const std::vector<int>& ring = s.channels[c].ring;
    const int pos = ringPosition(ring, params.rank);
    for (size_t k = 0; k < rounds; ++k) emitRound(steps, params, ring, pos, c, k, plan.chunkElems);
  }
  return s;
}

}  // namespace braid::algo
