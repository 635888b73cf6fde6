// The tiny lane: a host all_reduce of the shape the last one-shot call had runs straight on the
// one-shot board, without being dispatched again.
//
// Why a lane: two ranks that all_reduce a few bytes in a loop move two cache lines a call, and
// the time of a call is the time a line takes to cross plus the work a rank does between seeing
// its peer's input and publishing its next one. All of that work is on the critical path, so
// the lane leaves out what the first call of a shape settled for good (the operator, the
// choice, that zero-copy declines it) and lets the dispatcher record the call while its input
// travels rather than before it sets out (Calls::runTiny). What protects a call stays: the
// communicator's health is checked, the flight recorder holds the call before anything waits,
// the wait has its deadline and abort flag, and a failure is explained and kept as any call's.
#pragma once

#include <cstddef>

#include "braid/status.h"
#include "comm/call.h"
#include "comm/links.h"
#include "comm/recorder.h"
#include "kernels/host_reduce.h"
#include "tune/select.h"

namespace braid::comm {

class TinyLane {
 public:
  TinyLane(Links& links, Recorder& recorder) : links_(links), recorder_(recorder) {}

  /// Whether the lane runs `call`: armed, and the shape it was armed with.
  bool takes(const CollectiveCall& call) const {
    return armed_ && call.collective == Collective::kAllReduce && call.count == count_ &&
           call.type == type_ && call.op == op_ && call.blockCounts == nullptr;
  }
  /// After a one-shot all_reduce of `call`'s shape ran with `choice` and `op`: the next call of
  /// that shape takes the lane (the one-shot way arms it only where every such call would take
  /// the same way on every rank).
  void arm(const CollectiveCall& call, const tune::Choice& choice, const kernels::HostOp& op);
  /// The lane takes no call until armed again (a failure, a suspend).
  void disarm() { armed_ = false; }

  const tune::Choice& choice() const { return choice_; }
  const kernels::HostOp& hostOp() const { return hostOp_; }

  /// Puts this rank's input on the board: the call is under way.
  Status start(const CollectiveCall& call);
  /// Waits for the peers' inputs and reduces them, after start() gave `started`; the lane
  /// disarms on a failure.
  Status complete(const CollectiveCall& call, Status started);

 private:
  Links& links_;
  Recorder& recorder_;
  bool armed_ = false;
  size_t count_ = 0;
  DataType type_{};
  RedOp op_{};
  tune::Choice choice_;
  kernels::HostOp hostOp_;
};

}  // namespace braid::comm
