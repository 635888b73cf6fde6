// A way of running a call: one small object per way, each in a file of its own, asked in turn by
// the dispatcher (Calls, comm/calls.h) until one takes the call.
//
//   host communicators                       GPU communicators
//   tiny lane (before the dispatch: tiny_lane.h)
//   zero-copy          zero_copy_way.cc      copy for one rank   gpu_lone_copy_way.cc
//   one-shot           one_shot_way.cc       symmetric windows   gpu_symmetric_way.cc
//                                            launch              gpu_launch_way.cc
//   deterministic ring deterministic_ring_way.cc
//   scheduled          scheduled_way.cc
//
// Point-to-point batches have two ways of their own, host_p2p_way.cc and gpu_p2p_way.cc.
//
// A way says whether it takes the call (most look at the selector's choice; zero-copy asks the
// peers) and, when it takes it, runs it and says whether the operator's last step (avg's
// division) is left for the dispatcher, which applies it in one place (finishOutput, calls.cc).
// A new way is one more file: a class with this signature, and a line in the dispatcher's list
// (Calls::Calls or Calls::attachGpu).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "braid/status.h"
#include "comm/call.h"
#include "comm/recorder.h"
#include "comm/user_ops.h"
#include "kernels/host_reduce.h"
#include "tune/select.h"

namespace braid::comm {

/// A collective call as its ways see it: what the dispatcher settled before asking them.
struct WayCall {
  const CollectiveCall& call;
  Recorder::Scope& record;
  /// Host communicators: the reducing collectives' operator as the host's loops apply it.
  kernels::HostOp hostOp;
  /// GPU communicators: the reducing collectives' operator as the kernels apply it.
  OpSpec spec;
  /// The selector's algorithm and protocol, chosen before the first way that needs it.
  std::optional<tune::Choice> choice;
};

/// What a way did with a call.
struct Outcome {
  bool taken = false;
  Status status = Status::success();
  /// The call ran but its result still wants the operator's last step (avg's division), which
  /// the programs of schedules and the zero-copy board apply themselves.
  bool finishLeft = false;
  /// What ran the call when not the choice's algorithm ("zero-copy"), for the trace.
  const char* ran = nullptr;
  /// The channels that ran it, for the trace; 0: the communicator's.
  uint32_t channels = 0;

  static Outcome declined() { return {}; }
  static Outcome ranIt(Status s, bool finishLeft = false, const char* ran = nullptr) {
    return {true, std::move(s), finishLeft, ran, 0};
  }
};

class Way {
 public:
  virtual ~Way() = default;
  /// Whether the dispatcher must choose the algorithm before asking this way.
  virtual bool needsChoice() const { return true; }
  /// Runs `call` where this way takes it; Outcome::declined() leaves it to the next way.
  virtual Outcome run(WayCall& call) = 0;
};

}  // namespace braid::comm
