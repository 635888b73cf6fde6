// Times a schedule on a Machine by simulating every slice on its links.
//
// The model. Agents (a rank's channel, a CUDA block) run their steps in
// order, slice by slice, as the executors do. A slice starts when the agent
// is free, its incoming slice has arrived and, if it sends, the outgoing
// connection has a free slot (the receiver released slot k - kFifoSlots,
// and that release has travelled back one hop latency). A sending slice
// then occupies its link, the sender's port out and the receiver's port in
// (NVLink ports of the two GPUs inside a node, NICs between nodes;
// machine.h), for bytes / bandwidth from when both are free, and arrives one
// hop latency after it leaves the wire. A slice that only receives or
// copies locally costs nothing: GPU memory is far faster than the links.
// The receiver releases its incoming slot when its own slice is done.
//
// The order of events. A port several agents send through (a GPU's NVLink
// port shared by its channels, a NIC shared by a node's GPUs, a tree node's
// port in, fed by its parent and two children) is granted first come, first
// served, so those agents' slices are taken from a queue in time order. An
// agent whose ports nobody else uses cannot be overtaken, so it moves as
// soon as its inputs are known, in any order: a one-channel ring never
// touches the queue. Every time computed follows from times already known
// and is no earlier than the event that made it known, so both kinds of
// agent see the same causal history.
#pragma once

#include <cstdint>
#include <vector>

#include "algo/algorithm.h"
#include "braid/status.h"
#include "compact_schedule.h"
#include "machine.h"

namespace braid::sim {

struct TimingOptions {
  algo::Protocol protocol = algo::Protocol::kSimple;
  size_t elemBytes = 4;
  bool trace = false;  ///< record every step and message (for drawing; small runs only)
};

/// One step of one agent, from the start of its first slice to the end of its last.
struct StepSpan {
  int agent = 0;
  uint64_t step = 0;
  algo::StepOp op = algo::StepOp::kSend;
  double startUs = 0;
  double endUs = 0;
};

/// One message (a step's slices on one connection), from when its first
/// slice left the sender to when its last slice reached the receiver.
struct MessageArrow {
  int fromAgent = 0;
  uint64_t fromStep = 0;
  int toAgent = 0;
  uint64_t toStep = 0;
  double sentUs = 0;
  double arrivedUs = 0;
};

struct TimingResult {
  double timeUs = 0;                   ///< when the last agent finished
  uint64_t slices = 0;                 ///< slices simulated
  uint64_t queued = 0;                 ///< slices that went through the time-ordered queue
  int privateAgents = 0;               ///< agents whose ports nobody else uses
  std::vector<StepSpan> steps;         ///< with TimingOptions::trace
  std::vector<MessageArrow> messages;  ///< with TimingOptions::trace
};

/// Simulates `set` on `machine`, whose GPUs must number at least set.nranks.
/// Fails on a deadlock (checkSymbolically says where) or a schedule whose
/// slice sizes the two ends of a connection disagree on.
Result<TimingResult> simulateTiming(const ScheduleSet& set, const Machine& machine,
                                    const TimingOptions& options);

/// The hop latency and bandwidth (bytes/us) a message between two ranks
/// sees on `machine` with `protocol`: LL carries 4 bytes of data in each
/// 8-byte line, so it gets half the bandwidth.
struct HopCost {
  double latencyUs = 0;
  double bytesPerUs = 0;
};
HopCost hopCost(const Machine& machine, int sender, int receiver, algo::Protocol protocol);

}  // namespace braid::sim
