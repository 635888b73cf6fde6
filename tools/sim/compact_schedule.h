// Every rank's schedule at once, small enough for thousands of ranks.
//
// A ring all-reduce rank has 2N-1 Steps per round: 4096 ranks hold 33.5M of
// them, 1.6 GB as algo::Steps. Generators repeat themselves: a ring rank
// walks the buffer chunk by chunk with the same op, a tree rank repeats the
// same few steps (its two trees, its children and parent) chunk after chunk.
// So an agent's steps are stored as StepRuns: a block of `period` steps,
// repeated `repeats` times, every repetition moving all offsets by the same
// strides. A ring rank compresses to about ten runs per round and a tree
// rank to a few runs in all; a schedule without such patterns costs one run
// per step, so nothing is lost, only not saved.
//
// An agent is one (rank, channel): the unit that runs steps in order (a CUDA
// block, a host thread). Connections are the (sender, receiver, channel)
// FIFOs the steps use, numbered once so that the simulators index arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "algo/schedule.h"
#include "braid/status.h"

namespace braid::sim {

/// A step of a block, with its connections (indexConnections fills them).
struct BlockStep {
  algo::Step step{};
  int32_t inConn = -1;   ///< connection it receives on, -1 if it does not receive
  int32_t outConn = -1;  ///< connection it sends on, -1 if it does not send
};

/// `repeats` repetitions of the `period` steps from AgentSchedule::blockSteps[first].
struct StepRun {
  uint32_t first = 0;
  uint32_t period = 1;
  uint32_t repeats = 1;
  int64_t inStride = 0;  ///< how far the offsets move from one repetition to the next
  int64_t outStride = 0;
  uint64_t length() const { return uint64_t{period} * repeats; }
};

struct AgentSchedule {
  std::vector<StepRun> runs;
  std::vector<BlockStep> blockSteps;

  /// Step `pos` of repetition `rep` of `run`.
  algo::Step stepAt(const StepRun& run, uint32_t rep, uint32_t pos) const {
    algo::Step s = blockSteps[run.first + pos].step;
    s.inOffset += static_cast<size_t>(run.inStride * static_cast<int64_t>(rep));
    s.outOffset += static_cast<size_t>(run.outStride * static_cast<int64_t>(rep));
    return s;
  }
};

struct Connection {
  int sender = 0;
  int receiver = 0;
  int channel = 0;
};

struct ScheduleSet {
  Collective collective = Collective::kAllReduce;
  int nranks = 0;
  int nchannels = 0;
  int root = -1;
  size_t count = 0;                     ///< elements per rank, as the generators count
  std::vector<size_t> sliceElems;       ///< per rank
  std::vector<AgentSchedule> agents;    ///< agent = rank * nchannels + channel
  std::vector<Connection> connections;  ///< filled by indexConnections
  uint64_t steps = 0;                   ///< steps of all agents, empty ones included

  int agentOf(int rank, int channel) const { return rank * nchannels + channel; }
  int rankOf(int agent) const { return agent / nchannels; }
  int channelOf(int agent) const { return agent % nchannels; }
  /// Where an agent's `stepIndex` is, for messages: "rank 5 channel 0 step 17 (recvReduceSend)".
  std::string describeStep(int agent, uint64_t stepIndex, const algo::Step& step) const;
};

/// One rank's schedule, compressed: its header and each channel's runs.
struct CompressedRank {
  Collective collective = Collective::kAllReduce;
  int rank = 0;
  int nranks = 0;
  int root = -1;
  size_t count = 0;
  size_t sliceElems = 0;
  uint64_t steps = 0;
  std::vector<AgentSchedule> channels;
};
CompressedRank compressSchedule(const algo::Schedule& schedule);

/// Adds one rank (ranks must come in order 0, 1, ...): checks that it says
/// the same collective, rank count and channel count as the others.
Status appendRank(ScheduleSet& set, CompressedRank&& rank);
inline Status appendSchedule(ScheduleSet& set, const algo::Schedule& schedule) {
  return appendRank(set, compressSchedule(schedule));
}

/// Checks every peer and numbers the connections, filling inConn and outConn.
/// Empty steps are not checked: executors skip them before looking at peers.
/// Fails on a peer out of range or a rank that sends to itself.
Status indexConnections(ScheduleSet& set);

/// appendSchedule for each, then indexConnections: for tests and small runs.
Result<ScheduleSet> makeScheduleSet(const std::vector<algo::Schedule>& schedules);

}  // namespace braid::sim
