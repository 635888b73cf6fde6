#include "compact_schedule.h"

#include <unordered_map>

namespace braid::sim {
namespace {

// Blocks of up to this many steps are looked for: a tree node's chunk takes
// up to four steps per tree, and two trees alternate.
constexpr uint32_t kMaxPeriod = 8;

bool sameShape(const algo::Step& a, const algo::Step& b) {
  return a.op == b.op && a.recvPeer == b.recvPeer && a.sendPeer == b.sendPeer &&
         a.count == b.count && a.fromOutput == b.fromOutput;
}

// How many times the block steps[i, i + period) repeats from i on, each
// repetition moving every offset by the strides of the second one.
uint32_t repetitions(const std::vector<algo::Step>& steps, size_t i, uint32_t period,
                     int64_t* inStride, int64_t* outStride) {
  if (i + 2 * period > steps.size()) return 1;
  *inStride = static_cast<int64_t>(steps[i + period].inOffset - steps[i].inOffset);
  *outStride = static_cast<int64_t>(steps[i + period].outOffset - steps[i].outOffset);
  uint32_t reps = 1;
  for (size_t at = i + period; at + period <= steps.size() && reps < UINT32_MAX; at += period) {
    const int64_t r = reps;
    for (uint32_t p = 0; p < period; ++p) {
      const algo::Step& base = steps[i + p];
      const algo::Step& s = steps[at + p];
      if (!sameShape(base, s) || s.inOffset != base.inOffset + static_cast<size_t>(*inStride * r) ||
          s.outOffset != base.outOffset + static_cast<size_t>(*outStride * r)) {
        return reps;
      }
    }
    ++reps;
  }
  return reps;
}

// Greedy: at each step, the block period that covers the most steps.
AgentSchedule compressSteps(const std::vector<algo::Step>& steps) {
  AgentSchedule out;
  size_t i = 0;
  while (i < steps.size()) {
    StepRun best;
    for (uint32_t period = 1; period <= kMaxPeriod; ++period) {
      int64_t inStride = 0, outStride = 0;
      const uint32_t reps = repetitions(steps, i, period, &inStride, &outStride);
      if (reps >= 2 && uint64_t{period} * reps > best.length()) {
        best.period = period;
        best.repeats = reps;
        best.inStride = inStride;
        best.outStride = outStride;
      }
    }
    best.first = static_cast<uint32_t>(out.blockSteps.size());
    for (uint32_t p = 0; p < best.period; ++p) out.blockSteps.push_back({steps[i + p], -1, -1});
    out.runs.push_back(best);
    i += best.length();
  }
  out.runs.shrink_to_fit();
  out.blockSteps.shrink_to_fit();
  return out;
}

}  // namespace

std::string ScheduleSet::describeStep(int agent, uint64_t stepIndex, const algo::Step& step) const {
  std::string text = "rank " + std::to_string(rankOf(agent));
  if (nchannels > 1) text += " channel " + std::to_string(channelOf(agent));
  return text + " step " + std::to_string(stepIndex) + " (" + algo::stepOpName(step.op) + " of " +
         std::to_string(step.count) + ")";
}

CompressedRank compressSchedule(const algo::Schedule& schedule) {
  CompressedRank out;
  out.collective = schedule.collective;
  out.rank = schedule.rank;
  out.nranks = schedule.nranks;
  out.root = schedule.root;
  out.count = schedule.count;
  out.sliceElems = schedule.sliceElems;
  for (const algo::ChannelSchedule& channel : schedule.channels) {
    out.steps += channel.steps.size();
    out.channels.push_back(compressSteps(channel.steps));
  }
  return out;
}

Status appendRank(ScheduleSet& set, CompressedRank&& one) {
  const int rank = static_cast<int>(set.sliceElems.size());
  const int nchannels = static_cast<int>(one.channels.size());
  if (rank == 0) {
    set.collective = one.collective;
    set.nranks = one.nranks;
    set.nchannels = nchannels;
    set.root = one.root;
    set.count = one.count;
    set.agents.reserve(static_cast<size_t>(one.nranks) * nchannels);
  }
  if (one.rank != rank || one.nranks != set.nranks || one.collective != set.collective ||
      nchannels != set.nchannels) {
    return invalidArgument("schedule of rank " + std::to_string(one.rank) + " (" +
                           std::to_string(one.nranks) + " ranks, " + std::to_string(nchannels) +
                           " channels) does not fit the set at rank " + std::to_string(rank) +
                           " (" + std::to_string(set.nranks) + " ranks, " +
                           std::to_string(set.nchannels) + " channels)");
  }
  set.sliceElems.push_back(one.sliceElems);
  set.steps += one.steps;
  for (auto& runs : one.channels) set.agents.push_back(std::move(runs));
  return Status::success();
}

Status indexConnections(ScheduleSet& set) {
  if (static_cast<int>(set.sliceElems.size()) != set.nranks) {
    return invalidArgument("the set has schedules of " + std::to_string(set.sliceElems.size()) +
                           " ranks, expected " + std::to_string(set.nranks));
  }
  std::unordered_map<uint64_t, int32_t> index;
  auto connection = [&](int sender, int receiver, int channel) {
    const uint64_t key =
        (static_cast<uint64_t>(sender) * set.nranks + receiver) * set.nchannels + channel;
    auto [it, added] = index.emplace(key, static_cast<int32_t>(set.connections.size()));
    if (added) set.connections.push_back({sender, receiver, channel});
    return it->second;
  };
  set.connections.clear();
  for (int agent = 0; agent < static_cast<int>(set.agents.size()); ++agent) {
    const int rank = set.rankOf(agent);
    const int channel = set.channelOf(agent);
    AgentSchedule& a = set.agents[agent];
    uint64_t index = 0;  // of the run's first step, for messages
    for (const StepRun& run : a.runs) {
      for (uint32_t p = 0; p < run.period; ++p) {
        BlockStep& b = a.blockSteps[run.first + p];
        const algo::Step& s = b.step;
        if (s.count == 0) continue;
        const bool receives = algo::stepReceives(s.op);
        const bool sends = algo::stepSends(s.op);
        for (int peer : {receives ? s.recvPeer : rank, sends ? s.sendPeer : rank}) {
          if (peer < 0 || peer >= set.nranks) {
            return invalidArgument(set.describeStep(agent, index + p, s) + ": peer " +
                                   std::to_string(peer) + " out of range [0, " +
                                   std::to_string(set.nranks) + ")");
          }
        }
        if ((receives && s.recvPeer == rank) || (sends && s.sendPeer == rank)) {
          return invalidArgument(set.describeStep(agent, index + p, s) + ": talks to itself");
        }
        b.inConn = receives ? connection(s.recvPeer, rank, channel) : -1;
        b.outConn = sends ? connection(rank, s.sendPeer, channel) : -1;
      }
      index += run.length();
    }
  }
  return Status::success();
}

Result<ScheduleSet> makeScheduleSet(const std::vector<algo::Schedule>& schedules) {
  ScheduleSet set;
  for (const algo::Schedule& s : schedules) BRAID_TRY(appendSchedule(set, s));
  BRAID_TRY(indexConnections(set));
  return set;
}

}  // namespace braid::sim
