// Lowering schedules to engine instructions (program.h).
#include "exec/program.h"

#include <algorithm>
#include <string>
#include <utility>

namespace braid::exec {
namespace {

using kernels::engine::InstrKind;
using kernels::engine::kNoPort;

// The port of `peer` in `peers`, added at the end the first time.
Result<uint16_t> portOf(std::vector<int>& peers, int peer) {
  auto it = std::find(peers.begin(), peers.end(), peer);
  if (it != peers.end()) return static_cast<uint16_t>(it - peers.begin());
  if (peers.size() >= kNoPort) return internalError("a channel uses more peers than ports exist");
  peers.push_back(peer);
  return static_cast<uint16_t>(peers.size() - 1);
}

using Range = std::pair<size_t, size_t>;  // [first, last)

// Sorted, merged ranges of `ranges`.
std::vector<Range> merged(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<Range> out;
  for (const Range& r : ranges) {
    if (!out.empty() && r.first <= out.back().second) {
      out.back().second = std::max(out.back().second, r.second);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

Instruction finishInstruction(const Range& r) {
  Instruction f{};
  f.kind = InstrKind::kFinish;
  f.outOffset = r.first;
  f.count = r.second - r.first;
  f.recvPort = kNoPort;
  f.sendPort = kNoPort;
  return f;
}

}  // namespace

Result<Program> lowerSchedule(const algo::Schedule& schedule, bool finishOutput) {
  Program program;
  program.sliceElems = schedule.sliceElems;
  program.channels.resize(schedule.channels.size());
  std::vector<std::vector<Range>> written(schedule.channels.size());
  for (size_t c = 0; c < schedule.channels.size(); ++c) {
    ChannelProgram& ch = program.channels[c];
    for (const algo::Step& step : schedule.channels[c].steps) {
      if (step.count == 0) continue;
      Instruction ins{};
      ins.kind = InstrKind::kStep;
      ins.op = step.op;
      ins.fromOutput = step.fromOutput ? 1 : 0;
      ins.inOffset = step.inOffset;
      ins.outOffset = step.outOffset;
      ins.count = step.count;
      ins.chunk = static_cast<uint32_t>(step.chunk);
      ins.recvPort = kNoPort;
      ins.sendPort = kNoPort;
      if (algo::stepReceives(step.op)) {
        BRAID_ASSIGN_OR_RETURN(ins.recvPort, portOf(ch.recvPeers, step.recvPeer));
      }
      if (algo::stepSends(step.op)) {
        BRAID_ASSIGN_OR_RETURN(ins.sendPort, portOf(ch.sendPeers, step.sendPeer));
      }
      ch.instrs.push_back(ins);
      if (algo::stepWritesOutput(step.op)) {
        written[c].push_back({step.outOffset, step.outOffset + step.count});
      }
    }
  }
  if (!finishOutput) return program;
  std::vector<std::pair<Range, size_t>> all;  // every channel's ranges, to check they are apart
  for (size_t c = 0; c < written.size(); ++c) {
    for (const Range& r : merged(std::move(written[c]))) {
      program.channels[c].instrs.push_back(finishInstruction(r));
      all.push_back({r, c});
    }
  }
  std::sort(all.begin(), all.end());
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i].first.first < all[i - 1].first.second) {
      return internalError("channels " + std::to_string(all[i - 1].second) + " and " +
                           std::to_string(all[i].second) + " both write output elements from " +
                           std::to_string(all[i].first.first) +
                           "; the operator's final step cannot run on each alone");
    }
  }
  return program;
}

ChannelProgram p2pChannel(bool send, int peer, size_t offset, size_t bytes) {
  ChannelProgram ch;
  Instruction ins{};
  ins.kind = InstrKind::kStep;
  ins.op = send ? algo::StepOp::kSend : algo::StepOp::kRecv;
  ins.inOffset = send ? offset : 0;
  ins.outOffset = send ? 0 : offset;
  ins.count = bytes;
  ins.recvPort = send ? kNoPort : 0;
  ins.sendPort = send ? 0 : kNoPort;
  (send ? ch.sendPeers : ch.recvPeers).push_back(peer);
  ch.instrs.push_back(ins);
  return ch;
}

}  // namespace braid::exec
