// A schedule lowered to what the engine runs: per channel, the instructions
// (kernels/engine/step.h) and the peers behind their ports.
//
// Lowering replaces each step's peer ranks by port numbers, one list of
// receiving and one of sending peers per channel, in the order the steps
// first use them, and appends the operator's finish (avg's division) over
// the output each channel writes. The same Program then runs on the host
// executor, where a port is a transport end, and on a GPU, where it is a
// FIFO descriptor in device memory.
#pragma once

#include <cstddef>
#include <vector>

#include "algo/schedule.h"
#include "braid/status.h"
#include "kernels/engine/step.h"

namespace braid::exec {

using kernels::engine::Instruction;

struct ChannelProgram {
  std::vector<Instruction> instrs;
  std::vector<int> recvPeers;  ///< receiving port i takes messages from recvPeers[i]
  std::vector<int> sendPeers;  ///< sending port i sends to sendPeers[i]
};

struct Program {
  std::vector<ChannelProgram> channels;
  size_t sliceElems = 0;  ///< the schedule's slice size
};

/// Lowers `schedule`. With finishOutput, each channel ends with kFinish
/// instructions covering the output elements its steps write (merged into
/// ranges); channels must then write disjoint output, since on a GPU they
/// run at once. Steps with no elements are dropped.
Result<Program> lowerSchedule(const algo::Schedule& schedule, bool finishOutput);

/// One channel with one instruction, for the point-to-point work of a GPU
/// launch: a send of `bytes` to `peer` from the call's input at byte
/// `offset`, or a receive into its output.
ChannelProgram p2pChannel(bool send, int peer, size_t offset, size_t bytes);

}  // namespace braid::exec
